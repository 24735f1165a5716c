// rulesvm replay viewer: step through a logged game as any seat, or with everything revealed.
import { el, renderTable, renderLog, resultEl, zoneDialog } from "./render.js";

const token = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const $ = (id) => document.getElementById(id);
const view = { info: null, step: 0, seat: "all", loading: 0 };

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || `HTTP ${r.status}`);
  return data;
}

async function start() {
  try {
    view.info = await getJSON(`/api/replay/${encodeURIComponent(token)}`);
  } catch (err) {
    $("status").textContent = String(err.message || err);
    return;
  }
  const info = view.info;
  document.title = `${info.game.name} · replay · rulesvm`;
  $("game-name").textContent = `${info.game.name} (replay)`;
  $("who").textContent = `seed ${info.seed}, ${info.players} player${info.players === 1 ? "" : "s"}, ${info.steps} decisions`;
  const seat = $("seat");
  seat.append(new Option("Everything revealed", "all"));
  for (let p = 1; p <= info.players; p++) seat.append(new Option(`Player ${p}`, String(p)));
  seat.addEventListener("change", () => { view.seat = seat.value; show(); });
  const step = $("step");
  step.max = String(info.steps);
  step.addEventListener("input", () => go(Number(step.value)));
  $("first").addEventListener("click", () => go(0));
  $("back").addEventListener("click", () => go(view.step - 1));
  $("forward").addEventListener("click", () => go(view.step + 1));
  $("last").addEventListener("click", () => go(info.steps));
  if (info.problem) {
    const p = $("problem");
    p.textContent = `The replay stops early: ${info.problem}`;
    p.hidden = false;
  }
  const wanted = Number(new URLSearchParams(location.search).get("step"));
  go(Number.isInteger(wanted) && wanted > 0 ? wanted : 0);
}

function go(step) {
  const max = view.info.steps;
  view.step = Math.max(0, Math.min(max, step));
  show();
}

async function show() {
  const n = ++view.loading;
  const seat = view.seat;
  let msg;
  try {
    msg = await getJSON(`/api/replay/${encodeURIComponent(token)}/${view.step}?seat=${seat}`);
  } catch (err) {
    $("status").textContent = String(err.message || err);
    return;
  }
  if (n !== view.loading) return;            // a later request is on its way
  const info = view.info;
  $("step").value = String(msg.step);
  $("step-text").textContent = `step ${msg.step} of ${msg.steps}`;
  const me = msg.seat;
  const seats = [];
  for (let p = 1; p <= info.players; p++) {
    const agent = info.agents[String(p)];
    seats.push({ seat: p, kind: agent && agent !== "human" ? "bot" : "human", agent: agent && agent !== "human" ? agent : null });
  }
  const d = msg.decision;
  renderTable($("table"), info.layout, msg.observation, me, seats, {
    presence: false, current: d ? d.player : null, currentSecret: d ? d.secret : false,
    showZone: (label, v) => zoneDialog($("zone-dialog"), label, v, info.layout),
  });
  renderLog($("log"), msg.log, 0);
  renderDecision(msg);
  const s = $("status");
  if (msg.over) {
    const w = msg.result && msg.result.winner;
    s.textContent = "Game over" + (w ? `: Player ${w} wins` : "");
  } else if (d) {
    s.textContent = `Player ${d.player} to decide` + (d.secret ? " (in secret)" : "");
  } else {
    s.textContent = "";
  }
}

function renderDecision(msg) {
  const box = $("decision");
  box.replaceChildren();
  const d = msg.decision;
  if (msg.over && msg.result) {
    box.append(resultEl(msg.result, [], msg.seat));
    return;
  }
  if (!d) return;
  box.append(el("h2", "decision-title", `Player ${d.player}` + (d.secret ? " (secret choice)" : "")));
  if (d.prompt) box.append(el("p", "prompt", d.prompt));
  if (d.options) {
    const list = el("ol", "options replay-options");
    d.options.forEach((o, i) => {
      const li = el("li", "option" + (o.chosen ? " chosen" : ""));
      li.append(el("kbd", null, String(i + 1)), el("span", "option-label", o.label));
      if (o.chosen) li.append(el("span", "chosen-mark", "← chosen"));
      list.append(li);
    });
    box.append(list);
  }
  const nxt = msg.next;
  if (nxt) {
    box.append(el("p", "next", nxt.label === null
      ? `Player ${nxt.player} ${nxt.secret ? "made a secret choice" : "chose a card you cannot see"}`
      : `Next: Player ${nxt.player} chose ${nxt.label}`));
  }
}

document.addEventListener("keydown", (ev) => {
  if (!view.info || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.target instanceof HTMLSelectElement || ev.target instanceof HTMLInputElement) return;   // the slider steps itself
  if (ev.key === "ArrowRight") { ev.preventDefault(); go(view.step + 1); }
  else if (ev.key === "ArrowLeft") { ev.preventDefault(); go(view.step - 1); }
  else if (ev.key === "Home") { ev.preventDefault(); go(0); }
  else if (ev.key === "End") { ev.preventDefault(); go(view.info.steps); }
  else if (ev.key === "PageDown") { ev.preventDefault(); go(view.step + 10); }
  else if (ev.key === "PageUp") { ev.preventDefault(); go(view.step - 10); }
});

start();
