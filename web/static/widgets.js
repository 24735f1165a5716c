// rulesvm web table: the layout's widgets (docs/web.md#widgets). A widget draws game
// variables as a board game would: a track with markers, a counter, a die. Values come
// from the seat's observation only (obs.vars, obs.player_vars), as the variable chips do.
import { el } from "./render.js";

const SEAT_COLORS = ["#d64545", "#3f6fd8", "#e0b420", "#3d9a52", "#8a55c9", "#e07b2a", "#2aa7b8", "#dd6fa6"];

export function seatColor(layout, seat) {
  return (layout.colors || {})[String(seat)] || SEAT_COLORS[(seat - 1) % SEAT_COLORS.length];
}

function valueOf(obs, name, owner) {
  if (obs.vars && name in obs.vars) return obs.vars[name];
  const row = (obs.player_vars || {})[name];
  return row && owner !== null && owner !== undefined ? row[String(owner)] : undefined;
}

function widgetBox(spec, owner) {
  const sec = el("section", `widget widget-${spec.style}`);
  sec.dataset.widget = spec.name;
  if (owner) sec.dataset.owner = owner;
  sec.append(el("h3", "zone-head", null));
  sec.firstChild.append(el("span", "zone-label", spec.label));
  return sec;
}

// The markers of a track: [{position, label, color, title}].
function trackMarkers(spec, obs, layout) {
  const out = [];
  for (const m of spec.markers) {
    if ("at" in m) {
      out.push({ position: m.at, label: m.label || "", color: m.color || "#ddd" });
    } else if (m.per_player) {
      const row = (obs.player_vars || {})[m.var] || {};
      for (const [seat, v] of Object.entries(row)) {
        if (typeof v !== "number") continue;
        out.push({ position: v, label: (m.label ? m.label + " " : "P") + seat, color: m.color || seatColor(layout, Number(seat)),
                   seat: Number(seat) });
      }
    } else {
      const v = valueOf(obs, m.var);
      if (typeof v === "number") out.push({ position: v, label: m.label || spec.label, color: m.color || "#f2c14e" });
    }
  }
  return out;
}

function trackEl(spec, obs, layout) {
  const sec = widgetBox(spec);
  const lo = spec.from;
  const hi = spec.to;
  const markers = trackMarkers(spec, obs, layout);
  const line = el("ol", "track");
  line.style.setProperty("--positions", String(hi - lo + 1));
  const cells = new Map();
  for (let p = lo; p <= hi; p++) {
    const li = el("li", "track-cell" + (p === 0 && lo < 0 ? " track-zero" : ""));
    li.dataset.position = String(p);
    li.append(el("span", "track-label", spec.labels[p - lo] ?? String(p)));
    li.append(el("div", "track-markers"));
    cells.set(p, li);
    line.append(li);
  }
  for (const m of markers) {
    // A value past an end stands on that end, marked as beyond it.
    const at = Math.max(lo, Math.min(hi, m.position));
    const node = el("span", "marker", m.label);
    node.style.setProperty("--marker-color", m.color);
    node.title = `${m.label}: ${m.position}` + (at !== m.position ? (m.position > hi ? " (past the end)" : " (before the start)") : "");
    if (m.seat) node.dataset.seat = String(m.seat);
    node.dataset.position = String(m.position);
    cells.get(at).querySelector(".track-markers").append(node);
  }
  sec.append(line);
  if (spec.end_labels.length === 2) {
    const ends = el("div", "track-ends");
    ends.append(el("span", null, "← " + spec.end_labels[0]), el("span", null, spec.end_labels[1] + " →"));
    sec.append(ends);
  }
  sec.setAttribute("aria-label", `${spec.label}: ` + markers.map((m) => `${m.label} at ${m.position}`).join(", "));
  return sec;
}

function counterEl(spec, obs, owner) {
  const sec = widgetBox(spec, owner);
  const v = valueOf(obs, spec.var, owner);
  const shown = v === true ? "✓" : v === false ? "–" : v === undefined || v === null ? "?" : String(v);
  const token = el("div", "counter-token");
  token.append(el("span", "counter-value", shown));
  if (spec.max !== null && spec.max !== undefined) token.append(el("span", "counter-max", `/ ${spec.max}`));
  sec.append(token);
  sec.setAttribute("aria-label", `${spec.label}: ${shown}` + (spec.max != null ? ` of ${spec.max}` : ""));
  return sec;
}

// Pips of a six-sided die, as positions in a 3x3 grid (1 top left .. 9 bottom right).
const PIPS = { 1: [5], 2: [1, 9], 3: [1, 5, 9], 4: [1, 3, 7, 9], 5: [1, 3, 5, 7, 9], 6: [1, 3, 4, 6, 7, 9] };

function dieEl(spec, obs, owner) {
  const sec = widgetBox(spec, owner);
  const v = valueOf(obs, spec.var, owner);
  const face = el("div", "die");
  const rolled = typeof v === "number" && v >= 1 && v <= spec.sides;
  if (rolled && spec.sides === 6) {
    face.classList.add("pips");
    for (let i = 1; i <= 9; i++) face.append(el("span", PIPS[v].includes(i) ? "pip on" : "pip"));
  } else {
    face.append(el("span", "die-number", rolled ? String(v) : "–"));
  }
  face.dataset.value = rolled ? String(v) : "";
  sec.append(face);
  sec.setAttribute("aria-label", `${spec.label}: ` + (rolled ? `rolled ${v}` : "not rolled"));
  return sec;
}

// The widget `spec` for the seat's observation; `owner`: the player whose area it is in.
export function widgetEl(spec, obs, layout, owner) {
  if (spec.style === "track") return trackEl(spec, obs, layout);
  if (spec.style === "counter") return counterEl(spec, obs, owner);
  return dieEl(spec, obs, owner);
}
