// rulesvm host page: the lobby (open a table: game, variants, options, seats) and the debug
// panel of one table (bots paused / stepped / run, the log with filters, the full state,
// replay, downloads). It talks to /api/host/TOKEN/... only; seats never reach any of it.
import { el, renderTable, toast, zoneDialog } from "./render.js";

const token = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const api = `/api/host/${encodeURIComponent(token)}`;
const $ = (id) => document.getElementById(id);
const host = { overview: null, current: null, state: null, polling: null, seen: null };

async function call(url, body) {
  const init = body === undefined ? { cache: "no-store" }
    : { method: "POST", cache: "no-store", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(url, init);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || `HTTP ${r.status}`);
  return data;
}

// ------------------------------------------------------------------ the lobby

function gameOf(id) { return host.overview.lobby.games.find((g) => g.id === id); }

function fillLobby() {
  const lobby = host.overview.lobby;
  if (!lobby) return;
  $("lobby").hidden = false;
  const select = $("game");
  for (const g of lobby.games) {
    const n = g.players.min === g.players.max ? `${g.players.min}` : `${g.players.min}-${g.players.max}`;
    select.append(new Option(`${g.name} (${n} player${n === "1" ? "" : "s"})`, g.id));
  }
  select.addEventListener("change", () => showGame(gameOf(select.value)));
  $("players").addEventListener("change", () => showSeats(gameOf(select.value)));
  $("new-table").addEventListener("submit", (ev) => { ev.preventDefault(); openTable(); });
  if (lobby.skipped.length) {
    $("lobby-skipped").textContent = "Not listed: " + lobby.skipped.map((s) => `${s.file} (${s.reason})`).join("; ");
  }
  if (lobby.games.length) showGame(lobby.games[0]);
}

function showGame(g) {
  $("game-file").textContent = g.file;
  const players = $("players");
  players.min = String(g.players.min);
  players.max = String(g.players.max);
  players.value = String(g.players.default);
  players.disabled = g.players.min === g.players.max;
  const variants = $("variants");
  variants.replaceChildren(el("legend", null, "Variants"));
  const names = Object.keys(g.variants);
  if (!names.length) variants.append(el("p", "quiet small", "none"));
  for (const name of names) {
    const label = el("label", "check");
    const box = el("input");
    box.type = "checkbox";
    box.value = name;
    box.dataset.variant = name;
    label.append(box, ` ${name}`);
    label.title = g.variants[name];
    variants.append(label);
  }
  const options = $("options");
  options.replaceChildren(el("legend", null, "Options"));
  if (!g.options.length) options.append(el("p", "quiet small", "none"));
  for (const o of g.options) {
    const label = el("label", "option-field");
    label.append(el("span", null, o.name));
    let input;
    if (o.type === "bool") {
      input = el("select");
      input.append(new Option(`default (${o.default})`, ""), new Option("true", "true"), new Option("false", "false"));
    } else if (o.choices) {
      input = el("select");
      input.append(new Option(`default (${o.default})`, ""));
      for (const c of o.choices) input.append(new Option(String(c), String(c)));
    } else {
      input = el("input");
      input.type = o.type === "int" ? "number" : "text";
      if (o.min !== null) input.min = String(o.min);
      if (o.max !== null) input.max = String(o.max);
      input.placeholder = String(o.default);
    }
    input.dataset.option = o.name;
    label.title = o.doc || "";
    label.append(input);
    options.append(label);
  }
  showSeats(g);
}

function showSeats(g) {
  const seats = $("seats");
  const n = Number($("players").value) || g.players.default;
  const before = [...seats.querySelectorAll("select")].map((s) => s.value);
  seats.replaceChildren(el("legend", null, "Seats"));
  for (let p = 1; p <= n; p++) {
    const label = el("label", "option-field");
    label.append(el("span", null, `Player ${p}`));
    const pick = el("select");
    pick.dataset.seat = String(p);
    pick.append(new Option("a person", "human"));
    for (const b of host.overview.bots) pick.append(new Option(`bot: ${b}`, b));
    pick.value = before[p - 1] || (p === 1 ? "human" : host.overview.bots[0]);
    // A bot's parameters, as after the colon of `--agent 2=mcts:iterations=300`.
    const params = el("input", "bot-params");
    params.dataset.params = String(p);
    params.placeholder = "parameters, e.g. iterations=300";
    params.setAttribute("aria-label", `Player ${p}'s bot parameters`);
    params.hidden = pick.value === "human";
    pick.addEventListener("change", () => { params.hidden = pick.value === "human"; });
    label.append(pick);
    seats.append(label, params);
  }
}

async function openTable() {
  const g = gameOf($("game").value);
  const options = {};
  for (const input of document.querySelectorAll("[data-option]")) if (input.value !== "") options[input.dataset.option] = input.value;
  const request = {
    game: g.id, players: Number($("players").value), options,
    variants: [...document.querySelectorAll("[data-variant]:checked")].map((b) => b.value),
    seats: [...document.querySelectorAll("[data-seat]")].map((s) => {
      const params = document.querySelector(`[data-params="${s.dataset.seat}"]`).value.trim();
      return s.value !== "human" && params ? `${s.value}:${params}` : s.value;
    }),
    paused: $("paused").checked,
  };
  if ($("seed").value !== "") request.seed = Number($("seed").value);
  try {
    const { table } = await call(`${api}/tables`, request);
    await refreshOverview();
    select(table.id);
  } catch (err) {
    toast(`The table was not opened: ${err.message}`);
  }
}

// ------------------------------------------------------------------ tables

async function refreshOverview() {
  host.overview = await call(api);
  const list = $("tables");
  list.replaceChildren();
  if (!host.overview.tables.length) list.append(el("li", "quiet", "none yet"));
  for (const t of host.overview.tables) {
    const li = el("li", "table-item" + (t.id === host.current ? " selected" : ""));
    const b = el("button", "table-pick", `${t.id}: ${t.game.name}` + (t.over ? " (over)" : ` · ${t.decisions} decisions`));
    b.type = "button";
    b.dataset.table = t.id;
    b.addEventListener("click", () => select(t.id));
    li.append(b);
    list.append(li);
  }
}

function select(id) {
  host.current = id;
  host.seen = null;
  $("no-table").hidden = true;
  $("panel-body").hidden = false;
  $("download-save").href = `${api}/tables/${id}/save`;
  $("download-log").href = `${api}/tables/${id}/log`;
  document.querySelectorAll(".table-item").forEach((li) => li.classList.toggle("selected", li.querySelector("button").dataset.table === id));
  poll();
}

// ------------------------------------------------------------------ the panel

async function poll() {
  clearTimeout(host.polling);
  const id = host.current;
  if (!id) return;
  try {
    const msg = await call(`${api}/tables/${id}`);
    if (id === host.current) showPanel(msg);
  } catch (err) {
    $("status").textContent = String(err.message || err);
  }
  host.polling = setTimeout(poll, 700);
}

function showPanel(msg) {
  host.state = msg;
  const t = msg.table;
  $("panel-title").textContent = `${t.id}: ${t.game.name}` + (t.game.variants.length ? ` (${t.game.variants.join(", ")})` : "") +
    ` · seed ${t.seed}`;
  const bots = t.bots;
  const d = msg.decision;
  $("bot-state").textContent = (bots.paused ? "bots paused" : "bots running") + (bots.waiting ? " · a bot is waiting" : "") +
    (msg.over ? " · game over" : d ? ` · Player ${d.player} to decide` : "") + ` · ${t.decisions} decisions`;
  $("bot-state").dataset.paused = String(bots.paused);
  $("bot-state").dataset.waiting = String(bots.waiting);
  if (document.activeElement !== $("delay")) $("delay").value = String(bots.delay);
  const seatLinks = $("seat-links");
  seatLinks.replaceChildren(el("h2", null, "Seats"));
  const ul = el("ul", "seat-list");
  for (const s of t.seats) {
    const li = el("li");
    const a = el("a", null, `Player ${s.seat}` + (s.kind === "bot" ? ` (bot ${s.agent}, watch)` : ` (a person${s.connected ? ", online" : ""})`));
    a.href = s.url;
    a.target = "_blank";
    a.rel = "noopener";
    a.dataset.seatLink = String(s.seat);
    li.append(a, el("code", "seat-url", location.origin + s.url));
    ul.append(li);
  }
  seatLinks.append(ul);
  // Redrawn only when the game moved: the host may be reading or scrolling.
  if (host.seen !== msg.serial) {
    host.seen = msg.serial;
    const seats = t.seats.map((s) => ({ seat: s.seat, kind: s.kind, agent: s.agent }));
    renderTable($("table"), msg.layout, msg.observation, null, seats, {
      presence: false, current: d ? d.player : null, currentSecret: d ? d.secret : false,
      showZone: (label, v) => zoneDialog($("zone-dialog"), label, v, msg.layout),
    });
    $("state-json").textContent = JSON.stringify({ decision: msg.decision, result: msg.result, error: msg.error,
                                                   match: msg.state }, null, 1);
    const players = $("f-player");
    if (players.options.length !== t.players + 1) {
      players.replaceChildren(new Option("every player", ""));
      for (let p = 1; p <= t.players; p++) players.append(new Option(`Player ${p}`, String(p)));
    }
    showLog();
  }
}

function showLog() {
  const msg = host.state;
  if (!msg) return;
  const kinds = { log: $("f-log").checked, decision: $("f-decision").checked, note: $("f-note").checked };
  const player = $("f-player").value;
  const text = $("f-text").value.trim().toLowerCase();
  const list = $("host-log");
  list.replaceChildren();
  for (const e of msg.log) {
    if (!kinds[e.kind]) continue;
    if (player && !(e.player === Number(player) || (e.to && e.to.includes(Number(player))))) continue;
    if (text && !e.text.toLowerCase().includes(text)) continue;
    const li = el("li", `log-${e.kind}` + (e.to ? " private" : "") + (e.secret ? " secret" : ""));
    li.append(el("span", "log-text", e.text + (e.to ? `  (to Player ${e.to.join(", ")})` : "")));
    const jump = el("button", "jump", `▶ ${e.step}`);
    jump.type = "button";
    jump.title = `Open the replay at step ${e.step} (before this line's decision)`;
    jump.addEventListener("click", () => openReplay(e.step));
    li.append(jump);
    list.append(li);
  }
  list.scrollTop = list.scrollHeight;
}

async function bots(action, extra) {
  try {
    await call(`${api}/tables/${host.current}/bots`, { action, ...(extra || {}) });
    host.seen = null;
    poll();
  } catch (err) {
    toast(err.message);
  }
}

async function openReplay(step) {
  try {
    const { url } = await call(`${api}/tables/${host.current}/replay`, {});
    window.open(step === undefined ? url : `${url}?step=${step}`, "_blank", "noopener");
  } catch (err) {
    toast(err.message);
  }
}

$("pause").addEventListener("click", () => bots("pause"));
$("step").addEventListener("click", () => bots("step"));
$("run").addEventListener("click", () => bots("run"));
$("delay").addEventListener("change", () => bots("delay", { delay: Number($("delay").value) }));
$("replay").addEventListener("click", () => openReplay());
for (const id of ["f-log", "f-decision", "f-note", "f-player", "f-text"]) $(id).addEventListener("input", showLog);

async function start() {
  try {
    await refreshOverview();
  } catch (err) {
    $("status").textContent = String(err.message || err);
    return;
  }
  fillLobby();
  if (host.overview.tables.length) select(host.overview.tables[0].id);
  setInterval(() => refreshOverview().catch(() => {}), 3000);
}

start();
