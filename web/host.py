"""Who runs the server: the host's token, the tables it holds and the replays opened from them.

`rulesvm serve` prints the host's address (`/host/TOKEN`) once; only whoever has it reaches
the lobby (the games of a folder, web/lobby.py) and the debug panel (web/panel.py). Every
table has its seats' tokens; `seat(token)` finds the table and seat of a seat's token, so
the server routes each page to its own table. Tokens are random and kept in memory only.
"""

from __future__ import annotations

import secrets

from .lobby import Catalogue, TableRequest
from .replay import ReplayBook
from .table import Table

MAX_TABLES = 20         # tables one server holds at once (the lobby refuses more)
MAX_BOOKS = 20          # replays opened from the panel (the oldest is dropped)


class Host:
    def __init__(self, catalogue: Catalogue | None = None):
        self.token = secrets.token_urlsafe(18)
        self.catalogue = catalogue
        self.tables: dict[str, Table] = {}
        self.books: dict[str, ReplayBook] = {}
        self._next = 1

    def add(self, table: Table) -> str:
        """Hold `table`; its id (t1, t2, ...)."""
        table_id = f"t{self._next}"
        self._next += 1
        self.tables[table_id] = table
        return table_id

    def next_image_base(self) -> str:
        """Where the pictures of the next table are served (each table its own numbers)."""
        return f"/card-image/t{self._next}"

    def open(self, request: TableRequest, bot_delay: float) -> tuple[str, Table]:
        """A new table from a checked lobby request."""
        if len(self.tables) >= MAX_TABLES:
            raise ValueError(f"this server already holds {MAX_TABLES} tables: restart it for more")
        table = Table(request.game, request.players, request.seed, request.bots, bot_delay=bot_delay,
                      undo=request.undo is not None, undo_any=request.undo == "any", paused=request.paused,
                      image_base=self.next_image_base())
        return self.add(table), table

    def add_book(self, book: ReplayBook) -> str:
        if len(self.books) >= MAX_BOOKS:
            self.books.pop(next(iter(self.books)))
        self.books[book.token] = book
        return book.token

    def seat(self, token: str) -> tuple[Table, int] | None:
        """The table and 0-based seat of a seat's token, or None."""
        for table in self.tables.values():
            s = table.tokens.get(token)
            if s is not None:
                return table, s
        return None

    def images(self, key: str | None):
        """The pictures served under /card-image/KEY/ (the first table's under /card-image/)."""
        for table in self.tables.values():
            if table.images.base == ("/card-image" if key is None else f"/card-image/{key}"):
                return table.images
        for book in self.books.values():
            if book.images.base == ("/card-image" if key is None else f"/card-image/{key}"):
                return book.images
        return None
