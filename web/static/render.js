// rulesvm web table: drawing a seat's view (shared by the live table and the replay viewer).
// Everything drawn comes from the state the server sent for this seat: the engine's
// observation (hidden cards arrive as backs and counts only), the decision and the log.
// No innerHTML with data: every text goes through textContent.
import { widgetEl } from "./widgets.js";

import { addCardText, textLines } from "./cardtext.js";

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const PALETTE = {
  red: "#d64545", blue: "#3f6fd8", yellow: "#e0b420", green: "#3d9a52", black: "#33383d", white: "#c9ccd1",
  purple: "#8a55c9", orange: "#e07b2a", pink: "#dd6fa6", brown: "#8b5a35", grey: "#8a9099", gray: "#8a9099",
  cyan: "#2aa7b8", gold: "#c9a227", silver: "#9ea7b3",
};

function hue(text) {
  let h = 0;
  for (const ch of String(text)) h = (h * 31 + ch.codePointAt(0)) % 360;
  return h;
}

function cardColor(card, layout) {
  const face = layout.kinds[card.kind] || {};
  const value = face.color ? card[face.color] : null;
  if (value !== null && value !== undefined && value !== "") {
    const key = String(value);
    if (layout.colors && layout.colors[key]) return layout.colors[key];
    if (PALETTE[key.toLowerCase()]) return PALETTE[key.toLowerCase()];
    return `hsl(${hue(key)} 55% 45%)`;
  }
  if (layout.colors && layout.colors[card.kind]) return layout.colors[card.kind];
  return `hsl(${hue(card.kind)} 35% 42%)`;
}

function same(a, b) {
  return JSON.stringify(a === undefined ? null : a) === JSON.stringify(b === undefined ? null : b);
}

export function showValue(v) {
  if (v === true) return "yes";
  if (v === false) return "no";
  if (v === null || v === undefined) return "-";
  if (Array.isArray(v)) return v.length ? v.map(showValue).join(", ") : "-";
  return String(v);
}

function title(name) {
  const t = String(name).replace(/_/g, " ");
  return t.charAt(0).toUpperCase() + t.slice(1);
}

const TURN_TEXT = { 90: "turned 90° (sideways)", 180: "turned 180° (upside down)", 270: "turned 270° (sideways)" };

// ------------------------------------------------------------------ cards

export function cardEl(card, layout) {
  if (!card.name) {                       // a back: nothing about the card but its back
    const back = card.back || "card";
    const node = el("div", "card back");
    const hint = (layout.backs || {})[back] || {};
    node.dataset.back = back;
    if (hint.color) node.style.setProperty("--back-color", hint.color);
    if (hint.image) {
      const img = el("img", "card-img");
      img.alt = "";
      img.src = hint.image;
      img.addEventListener("error", () => img.remove());
      node.append(img);
    }
    const label = hint.label || (back !== "card" ? title(back) : "");
    if (label) node.append(el("span", "back-label", label));
    if (card.turn === 90) node.classList.add("sideways");
    node.title = "face down" + (label ? ` (${label})` : "") + (card.turn === 90 ? ", sideways" : "");
    node.setAttribute("aria-label", node.title);
    return node;
  }
  const face = layout.kinds[card.kind] || { fields: [], defaults: {}, vars: [] };
  const node = el("div", "card face");
  node.dataset.card = card.id;
  node.dataset.kind = card.kind;
  node.style.setProperty("--card-color", cardColor(card, layout));
  const top = el("div", "card-top");
  if (face.number && card[face.number] !== null && card[face.number] !== undefined) {
    top.append(el("span", "card-number", showValue(card[face.number])));
  }
  top.append(el("span", "card-kind", title(card.kind)));
  node.append(top);
  if (card.image) {
    const img = el("img", "card-img");
    img.alt = "";
    img.src = card.image;
    img.addEventListener("error", () => img.remove());
    node.append(img);
  }
  node.append(el("div", "card-name", card.name));
  longName(node, card.name);
  const fields = el("div", "card-fields");
  for (const f of face.fields || []) {
    const v = card[f];
    if (v === null || v === undefined || v === "" || v === false || (Array.isArray(v) && !v.length)) continue;
    if (f in (face.defaults || {}) && same(v, face.defaults[f])) continue;
    fields.append(el("span", "field", v === true ? title(f) : `${title(f)}: ${showValue(v)}`));
  }
  if (fields.childElementCount) node.append(fields);
  const badges = el("div", "card-badges");
  const defaults = layout.card_vars || {};
  for (const v of face.vars || []) {
    if (!(v in card)) continue;
    if (v in defaults && same(card[v], defaults[v])) continue;
    if (card[v] === null || card[v] === false) continue;
    badges.append(el("span", "badge", card[v] === true ? title(v) : `${title(v)} ${showValue(card[v])}`));
  }
  if (badges.childElementCount) node.append(badges);
  const notes = [];
  if (card.turn) {
    node.classList.add(`turn-${card.turn}`);
    top.prepend(el("span", "turn-mark", `↻${card.turn}°`));     // in the top line: never over the fields
    notes.push(TURN_TEXT[card.turn] || `turned ${card.turn}°`);
  }
  if (card.side === "back") {
    node.classList.add("back-side");
    node.append(el("span", "ribbon", "back side"));
    notes.push("back side up");
  } else if (card.facedown) {
    node.classList.add("facedown-known");
    node.append(el("span", "ribbon", "face down"));
    notes.push("face down (you may look at it)");
  }
  const tip = textLines(card).concat([title(card.kind)]);
  for (const [k, v] of Object.entries(card)) {
    if (["id", "name", "kind", "turn", "side", "facedown", "image", "text", "other_side"].includes(k)) continue;
    tip.push(`${k}: ${showValue(v)}`);
  }
  node.title = tip.concat(notes).join("\n");
  addCardText(node, card);
  node.setAttribute("aria-label", [card.name].concat(notes).join(", "));
  return node;
}

function backsOf(view, limit) {
  // A hidden zone: its count, and (when cards differ face down) how many of each back.
  const out = [];
  const backs = view.backs || { card: view.count };
  for (const [name, n] of Object.entries(backs)) {
    for (let i = 0; i < n && out.length < limit; i++) out.push({ facedown: true, back: name });
  }
  return out;
}

// ------------------------------------------------------------------ zones

function countOf(view) {
  if (Array.isArray(view)) return view.reduce((n, v) => n + countOf(v), 0);
  return view.count;
}

function cardsEl(view, layout, cls, limit) {
  const box = el("div", cls);
  const cards = view.cards ? view.cards : backsOf(view, limit);
  for (const c of cards) box.append(cardEl(c, layout));
  if (!view.cards && view.count > cards.length) box.append(el("span", "more", `+${view.count - cards.length}`));
  if (!view.count) box.classList.add("empty");
  return box;
}

function pileEl(view, layout, ctx, label) {
  const box = el("div", "pile");
  if (!view.count) {
    box.classList.add("empty");
    box.append(el("div", "slot"));
  } else if (view.cards) {
    box.append(cardEl(view.cards[view.cards.length - 1], layout));
    if (view.count > 1) {
      box.classList.add("several");
      const open = el("button", "pile-open", `all ${view.count}`);
      open.type = "button";
      open.title = `Show every card in ${label}`;
      open.addEventListener("click", () => ctx.showZone && ctx.showZone(label, view));
      box.append(open);
    }
  } else {
    // A face-down pile: its back if all cards share one; else a plain back (the order is secret)
    // and how many of each back it holds.
    const kinds = Object.keys(view.backs || {});
    const back = cardEl({ facedown: true, back: kinds.length === 1 ? kinds[0] : "card" }, layout);
    if (kinds.length > 1) {
      const mix = kinds.map((k) => `${view.backs[k]} ${title(k)}`).join(", ");
      back.title = `face down: ${mix}`;
      back.setAttribute("aria-label", back.title);
      box.append(back, el("span", "pile-mix", mix));
    } else {
      box.append(back);
    }
    if (view.count > 1) box.classList.add("several");
  }
  box.append(el("span", "pile-count", view.count));
  return box;
}

function cellEl(view, layout, stack, label) {
  const cell = el("div", `cell stack-${stack}`);
  if (label !== undefined) cell.append(el("span", "cell-label", label));
  const cards = el("div", "cell-cards");
  const list = view.cards ? view.cards : backsOf(view, 8);
  for (const c of list) cards.append(cardEl(c, layout));
  if (!view.count) cards.append(el("div", "slot"));
  cell.append(cards);
  if (view.count > 1) cell.append(el("span", "cell-count", view.count));
  return cell;
}

function familyCells(spec, views) {
  // How many cells of an indexed(n) family to draw: at least min_cells, and up to the last
  // cell with cards (a compacting row of 32 zones shows only what is used).
  let last = -1;
  views.forEach((v, i) => { if (v.count) last = i; });
  return Math.min(views.length, Math.max(spec.min_cells || 0, last + 1));
}

// A name whose longest word would not fit the card's width is set smaller rather than broken.
function longName(node, name) {
  const longest = Math.max(0, ...String(name).split(/\s+/).map((w) => w.length));
  if (longest > 12) node.classList.add("longer-name");
  else if (longest > 9) node.classList.add("long-name");
}

export function zoneEl(spec, view, layout, ctx, owner) {
  const sec = el("section", `zone style-${spec.style} size-${spec.size}`);
  sec.dataset.zone = spec.name;
  if (owner) sec.dataset.owner = owner;
  const head = el("h3", "zone-head");
  head.append(el("span", "zone-label", spec.label));
  head.lastChild.title = spec.label;
  const n = countOf(view);
  head.append(el("span", "zone-count", n));
  sec.append(head);
  const label = owner ? `${spec.label} of Player ${owner}` : spec.label;
  sec.setAttribute("aria-label", `${label}: ${n} card${n === 1 ? "" : "s"}`);
  if (Array.isArray(view) && Array.isArray(view[0])) {         // indexed(cols, rows): a grid
    const grid = el("div", "grid");
    const cols = view[0].length;
    grid.style.gridTemplateColumns = `repeat(${cols}, auto)` + (spec.row_labels ? " auto" : "");
    if (spec.col_labels) {
      for (let c = 0; c < cols; c++) grid.append(el("span", "col-label", spec.col_labels[c] ?? ""));
      if (spec.row_labels) grid.append(el("span", "grid-corner"));
    }
    view.forEach((row, r) => {
      row.forEach((cellView, c) => {
        const cell = cellEl(cellView, layout, "down");
        cell.dataset.cell = `${c},${r}`;
        grid.append(cell);
      });
      if (spec.row_labels) grid.append(el("span", "row-label", spec.row_labels[r] ?? ""));
    });
    sec.append(grid);
  } else if (Array.isArray(view)) {                             // indexed(n): columns
    const row = el("div", "columns" + (spec.reverse ? " reverse" : ""));
    const shown = familyCells(spec, view);
    for (let i = 0; i < shown; i++) {
      const cell = cellEl(view[i], layout, spec.stack || "down", spec.cell_labels ? spec.cell_labels[i] ?? "" : undefined);
      cell.dataset.cell = String(i);
      row.append(cell);
    }
    if (!shown) row.append(el("div", "slot"));
    sec.append(row);
  } else if (spec.style === "pile") {
    sec.append(pileEl(view, layout, ctx, label));
  } else {
    sec.append(cardsEl(view, layout, `cards ${spec.style}`, spec.style === "hand" ? 20 : 40));
  }
  return sec;
}

function areaEl(area, zoneViews, layout, ctx, owner, flip) {
  const box = el("div", "area");
  const draw = (name) => {
    const widget = (layout.widgets || {})[name];
    if (widget) return ctx.obs ? widgetEl(widget, ctx.obs, layout, owner) : null;
    const spec = layout.zones[name];
    const view = zoneViews[name];
    if (!spec || view === undefined) return null;
    return zoneEl(spec, owner ? view[String(owner)] : view, layout, ctx, owner);
  };
  if (area.rows) {
    box.classList.add("area-grid");
    // Across the table, another player's area is seen from the other side: its rows reversed,
    // so what lies in front of them (e.g. their units) is next to the centre.
    const rows = flip ? [...area.rows].reverse() : area.rows;
    box.style.gridTemplateAreas = rows.map((r) => '"' + r.map((c) => (c ? "z_" + c : ".")).join(" ") + '"').join(" ");
    const done = new Set();
    for (const row of area.rows) {
      for (const name of row) {
        if (!name || done.has(name)) continue;
        done.add(name);
        const z = draw(name);
        if (z) {
          z.style.gridArea = "z_" + name;
          box.append(z);
        }
      }
    }
  } else {
    box.classList.add("area-flow");
    for (const name of area.flow || []) {
      const z = draw(name);
      if (z) box.append(z);
    }
  }
  if (area.extra && area.extra.length) {
    const more = el("div", "area-flow area-extra");
    for (const name of area.extra) {
      const z = draw(name);
      if (z) more.append(z);
    }
    const wrap = el("div", "area-wrap");
    wrap.append(box, more);
    return wrap;
  }
  return box;
}

function varsEl(names, labels, get) {
  const dl = el("dl", "vars");
  for (const name of names) {
    const v = get(name);
    if (v === undefined) continue;
    const item = el("div", "var");
    item.dataset.var = name;
    item.append(el("dt", null, labels[name] || title(name)), el("dd", null, showValue(v)));
    dl.append(item);
  }
  return dl;
}

export function seatName(seatInfo, me) {
  const who = `Player ${seatInfo.seat}`;
  if (me !== null && seatInfo.seat === me) return `${who} (you)`;
  return who + (seatInfo.kind === "bot" ? ` · bot${seatInfo.agent ? " " + seatInfo.agent : ""}` : "");
}

// The whole table: the other players at the top, the centre, this seat's area at the bottom.
export function renderTable(root, layout, obs, me, seats, ctx) {
  root.replaceChildren();
  ctx.obs = obs;          // widgets read the variables they show from it
  const players = obs.players;
  const order = [];
  const first = me || 1;
  for (let k = 1; k <= players; k++) order.push(((first - 1 + k) % players) + 1);   // after me, me last
  const others = order.slice(0, players - 1);
  const mine = order[players - 1];
  const playerVars = layout.vars.player;
  const playerArea = (p, cls) => {
    const sec = el("section", `player ${cls}`);
    sec.dataset.player = p;
    const info = seats[p - 1] || { seat: p, kind: "human" };
    if (ctx.current === p) sec.classList.add("current");
    const head = el("header", "player-head");
    head.append(el("h2", "player-name", seatName(info, me)));
    if (info.kind === "human" && me !== null && ctx.presence) {
      head.append(el("span", "presence " + (info.connected ? "online" : "offline"), info.connected ? "online" : "away"));
    }
    if (ctx.current === p) head.append(el("span", "turn-flag", ctx.currentSecret ? "choosing in secret" : "to play"));
    head.append(varsEl(playerVars, layout.vars.labels, (n) => {
      const row = obs.player_vars[n] || {};
      return String(p) in row ? row[String(p)] : undefined;
    }));
    for (const name of (layout.vars.widgets || {}).player || []) head.append(widgetEl(layout.widgets[name], obs, layout, p));
    sec.append(head);
    sec.append(areaEl(layout.player, obs.zones, layout, ctx, p, cls === "opponent"));
    return sec;
  };
  if (others.length) {
    const top = el("div", "opponents");
    if (others.length > 1) top.classList.add("many");
    for (const p of others) top.append(playerArea(p, "opponent"));
    root.append(top);
  }
  const centre = el("section", "centre");
  centre.setAttribute("aria-label", "The centre of the table");
  const gv = varsEl(layout.vars.global, layout.vars.labels, (n) => obs.vars[n]);
  const loose = (layout.vars.widgets || {}).global || [];
  if (loose.length) {
    const row = el("div", "widgets-row");
    for (const name of loose) row.append(widgetEl(layout.widgets[name], obs, layout, null));
    gv.prepend(row);
  }
  if (gv.childElementCount) centre.append(gv);
  const hasCentre = (layout.centre.rows || layout.centre.flow || []).length || layout.centre.extra.length;
  if (hasCentre) centre.append(areaEl(layout.centre, obs.zones, layout, ctx, null));
  root.append(centre);
  if (obs.known && obs.known.length) root.append(knownEl(obs.known, layout));
  const hasPlayerArea = (layout.player.rows || layout.player.flow || []).length || layout.player.extra.length ||
                        playerVars.length || players > 1;
  if (hasPlayerArea) root.append(playerArea(mine, me ? "mine" : "opponent"));
}

// The cards this seat knows but does not see (shown to it, passed, seen go into a hand), with where each lies.
function knownEl(known, layout) {
  const sec = el("section", "known");
  sec.setAttribute("aria-label", "Cards you know but do not see");
  sec.append(el("h3", "known-title", "You know"));
  const row = el("div", "known-cards");
  for (const card of known) {
    const fig = el("figure", "known-card");
    fig.append(cardEl(card, layout));
    const at = "from_top" in card ? `, ${card.from_top + 1} from the top` : "";
    fig.append(el("figcaption", null, `in ${card.zone}${at}`));
    row.append(fig);
  }
  sec.append(row);
  return sec;
}

// ------------------------------------------------------------------ log and result

export function renderLog(list, entries, base) {
  while (list.children.length > base) list.lastChild.remove();
  for (const e of entries) {
    const li = el("li", `log-${e.kind}` + (e.private ? " private" : ""), e.text);
    if (e.private) li.title = "only you see this line";
    list.append(li);
  }
  list.scrollTop = list.scrollHeight;
}

export function resultEl(result, seats, me) {
  const box = el("div", "result-box");
  box.append(el("h2", null, "Game over"));
  if (result.winner !== null && result.winner !== undefined) {
    box.append(el("p", "winner", result.winner === me ? `You win! (Player ${result.winner})` : `Player ${result.winner} wins`));
  }
  if (result.outcome) box.append(el("p", "outcome", `Outcome: ${result.outcome}`));
  const table = el("table", "ranking");
  const head = el("tr");
  for (const h of ["Rank", "Player", "Score"]) head.append(el("th", null, h));
  table.append(head);
  const scores = result.scores || {};
  const ranking = result.ranking || Object.keys(scores).map(Number);
  ranking.forEach((entry, i) => {
    for (const p of Array.isArray(entry) ? entry : [entry]) {
      const tr = el("tr", p === me ? "me" : "");
      const info = seats[p - 1] || { seat: p, kind: "human" };
      tr.append(el("td", null, i + 1), el("td", null, seatName(info, me)), el("td", null, scores[String(p)] ?? ""));
      table.append(tr);
    }
  });
  box.append(table);
  return box;
}

export function zoneDialog(dialog, label, view, layout) {
  dialog.replaceChildren();
  dialog.append(el("h2", null, label));
  const cards = el("div", "cards row dialog-cards");
  for (const c of view.cards || []) cards.append(cardEl(c, layout));
  dialog.append(cards);
  const close = el("button", "close", "Close (Esc)");
  close.type = "button";
  close.addEventListener("click", () => dialog.close());
  dialog.append(close);
  dialog.showModal();
  close.focus();
}

// A message that shows for a few seconds in the page's `#toast` (the table's and the host's pages).
export function toast(text) {
  const t = document.getElementById("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(t.timer);
  t.timer = setTimeout(() => { t.hidden = true; }, 6000);
}
