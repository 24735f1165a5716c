// rulesvm web table: one seat's page. It shows what the server sends for this seat and
// sends back only {type: "choose", option, serial} or {type: "undo", serial}.
import { el, renderTable, renderLog, resultEl, seatName, toast, zoneDialog } from "./render.js";
import { optionText } from "./cardtext.js";
import { renderSteps, stepKey } from "./steps.js";

const token = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const $ = (id) => document.getElementById(id);
const page = {
  ws: null, hello: null, state: null, serial: null, sentFor: null, pending: null,
  fatal: false, retry: 0, resultShown: false,
};

// ------------------------------------------------------------------ the connection

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/ws/${encodeURIComponent(token)}`);
  page.ws = ws;
  setConnection("connecting");
  ws.addEventListener("open", () => { page.retry = 0; setConnection("online"); });
  ws.addEventListener("message", (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch { return; }
    if (msg.type === "hello") onHello(msg);
    else if (msg.type === "state") onState(msg);
    else if (msg.type === "error") onError(msg);
  });
  ws.addEventListener("close", (ev) => {
    if (page.fatal || ev.code === 4404 || ev.code === 4403) { setConnection("closed"); return; }
    setConnection("reconnecting");
    page.retry = Math.min(page.retry + 1, 6);
    setTimeout(connect, 250 * 2 ** page.retry);
  });
}

function send(msg) {
  if (page.ws && page.ws.readyState === WebSocket.OPEN) {
    page.ws.send(JSON.stringify(msg));
    return true;
  }
  toast("Not connected: reconnecting…");
  return false;
}

function setConnection(what) {
  const node = $("connection");
  node.className = `conn conn-${what}`;
  node.textContent = { connecting: "connecting…", online: "connected", reconnecting: "connection lost: reconnecting…",
                       closed: "disconnected" }[what];
}

// ------------------------------------------------------------------ messages

function onHello(msg) {
  page.hello = msg;
  document.title = `${msg.game.name} · Player ${msg.seat} · rulesvm`;
  $("game-name").textContent = msg.game.name + (msg.game.variants.length ? ` (${msg.game.variants.join(", ")})` : "");
  $("who").textContent = `You are Player ${msg.seat} of ${msg.players}`;
  $("log").replaceChildren();
}

function onError(msg) {
  if (msg.fatal) {
    page.fatal = true;
    $("status").textContent = msg.message;
    $("table").replaceChildren(el("p", "fatal", msg.message));
  }
  toast(msg.message);
}

function onState(msg) {
  const newSerial = msg.serial !== page.serial;
  page.state = msg;
  page.serial = msg.serial;
  const seats = msg.seats;
  const d = msg.decision;
  const ctx = {
    presence: true,
    current: d && !msg.over ? d.player : null,
    currentSecret: d ? d.secret : false,
    showZone: (label, view) => zoneDialog($("zone-dialog"), label, view, page.hello.layout),
  };
  renderTable($("table"), page.hello.layout, msg.observation, msg.seat, seats, ctx);
  renderLog($("log"), msg.log, msg.log_base);
  tellAutomatic(msg.log);
  renderStatus(msg);
  if (newSerial || page.sentFor === msg.serial) {
    page.sentFor = null;
    page.pending = null;
    renderDecision(msg, newSerial);
  } else {
    markCards(msg);
  }
  renderResult(msg);
}

// A move the engine made for this seat (one legal option, or nothing to choose): the log
// has it; a toast says it at once, with its reason.
function tellAutomatic(entries) {
  const auto = (entries || []).filter((e) => e.kind === "auto");
  if (auto.length) toast(auto[auto.length - 1].text);
}

function renderStatus(msg) {
  const s = $("status");
  const d = msg.decision;
  s.className = "status";
  if (msg.error) { s.textContent = "The game stopped (see the log)"; s.classList.add("bad"); return; }
  if (msg.over) {
    const w = msg.result && msg.result.winner;
    s.textContent = "Game over" + (w ? (w === msg.seat ? ": you win!" : `: Player ${w} wins`) : "");
    return;
  }
  if (!d) { s.textContent = ""; return; }
  if (d.mine && d.options) {
    s.textContent = d.secret ? "Your turn (a secret choice)" : "Your turn";
    s.classList.add("mine");
  } else if (d.mine) {
    s.textContent = msg.bots_paused ? "The host has paused the bots" : "The bot of this seat is deciding…";
  } else {
    const who = `Player ${d.player}` + (d.bot ? " (bot)" : "");
    s.textContent = d.secret ? `${who} is choosing in secret…` : `Waiting for ${who}: ${d.prompt}`;
    if (d.bot && msg.bots_paused) s.textContent += " (the host has paused the bots)";
  }
}

// ------------------------------------------------------------------ the decision panel

function renderDecision(msg, focus) {
  const box = $("decision");
  box.replaceChildren();
  box.classList.remove("sent");
  const d = msg.decision;
  if (!msg.over && d && d.mine && d.options && d.steps) {
    box.classList.add("active");
    renderSteps(box, d, msg.serial, choose, focus);      // a compound choice, one pick at a time
  } else if (!msg.over && d && d.mine && d.options) {
    box.classList.add("active");
    box.append(el("h2", "decision-title", d.secret ? "Your secret choice" : "Your turn"));
    box.append(el("p", "prompt", d.prompt));
    if (d.help) box.append(el("p", "help", d.help));
    if (d.picked && d.picked.length) box.append(el("p", "picked", "Picked so far: " + d.picked.join(", ")));
    let filter = null;
    const many = d.options.length > 9;
    if (many) {
      filter = el("input", "filter");
      filter.type = "search";
      filter.id = "option-filter";
      filter.placeholder = "Type an option or its number, Enter to choose";
      filter.setAttribute("aria-label", "Filter the options");
      filter.autocomplete = "off";
      box.append(filter);
    }
    const list = el("ol", "options");
    list.id = "options";
    d.options.forEach((o, i) => {
      const li = el("li");
      const b = el("button", "option" + (i === d.pass_index ? " pass" : ""));
      b.type = "button";
      b.dataset.option = String(o.id);
      b.append(el("kbd", null, String(i + 1)), el("span", "option-label", o.label));
      optionText(b, o);
      if (i === d.pass_index) b.title = "Enter in the filter box also picks this";
      b.addEventListener("click", () => choose(o.id));
      li.append(b);
      list.append(li);
    });
    box.append(list);
    if (filter) {
      filter.addEventListener("input", () => applyFilter(filter.value));
      filter.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") { ev.preventDefault(); filterEnter(filter.value); }
        else if (ev.key === "ArrowDown") { ev.preventDefault(); visibleOptions()[0]?.focus(); }
        else if (ev.key === "Escape" && page.pending === null) {
          // Esc clears the box, then leaves it (so that single keys such as U work again).
          ev.preventDefault();
          ev.stopPropagation();
          if (filter.value) { filter.value = ""; applyFilter(""); } else filter.blur();
        }
      });
    }
    const confirm = el("div", "confirm");
    confirm.id = "confirm";
    confirm.hidden = true;
    box.append(confirm);
    if (focus) (filter || list.querySelector("button"))?.focus({ preventScroll: true });
  } else {
    box.classList.remove("active");
    if (msg.over) box.append(el("p", "quiet", "The game is over."));
    else if (d && !d.mine) box.append(el("p", "quiet", d.secret ? `Player ${d.player} is choosing in secret.`
                                                          : `Player ${d.player}${d.bot ? " (bot)" : ""} is deciding: ${d.prompt}`));
    else if (d && d.mine) box.append(el("p", "quiet", "A bot plays this seat; you are watching."));
  }
  if (page.hello && page.hello.undo && msg.seats[msg.seat - 1].kind === "human" && !msg.over) {
    const undo = el("button", "undo", "Undo my last decision (U)");
    undo.type = "button";
    undo.id = "undo";
    undo.disabled = !msg.can_undo;
    undo.title = msg.can_undo ? "Take back your last decision (and the bots' moves after it)"
                              : "Nothing to take back now";
    undo.addEventListener("click", doUndo);
    box.append(undo);
  }
  markCards(msg);
}

function visibleOptions() {
  return [...document.querySelectorAll("#options li:not([hidden]) button")];
}

function normal(text) { return text.toLowerCase().split(/\s+/).filter(Boolean).join(" "); }

function applyFilter(text) {
  const want = normal(text);
  const isNumber = /^\d+$/.test(want);
  document.querySelectorAll("#options li").forEach((li, i) => {
    const label = normal(li.querySelector(".option-label").textContent);
    li.hidden = !(want === "" || (isNumber ? String(i + 1).startsWith(want) : label.includes(want)));
  });
}

function filterEnter(text) {
  const d = page.state && page.state.decision;
  if (!d || !d.options) return;
  const want = normal(text);
  if (want === "") {
    if (d.pass_index >= 0) choose(d.options[d.pass_index].id);
    return;
  }
  if (/^\d+$/.test(want)) {
    const k = Number(want);
    if (k >= 1 && k <= d.options.length) choose(d.options[k - 1].id);
    else toast(`There is no option ${k}: choose 1 to ${d.options.length}`);
    return;
  }
  const exact = d.options.filter((o) => normal(o.label) === want);
  const shown = visibleOptions();
  if (exact.length === 1) choose(exact[0].id);
  else if (shown.length === 1) choose(Number(shown[0].dataset.option));
  else toast(shown.length ? `${shown.length} options match: type more, or pick one` : "No option matches");
}

function choose(optionId) {
  const msg = page.state;
  if (!msg || !msg.decision || !msg.decision.options || page.sentFor === msg.serial) return;
  const option = msg.decision.options.find((o) => o.id === optionId);
  if (!option) return;
  if (msg.decision.confirm && page.pending !== optionId) {
    askConfirm(option);
    return;
  }
  if (send({ type: "choose", option: optionId, serial: msg.serial })) {
    page.sentFor = msg.serial;
    $("decision").classList.add("sent");
    document.querySelectorAll("#options button, .choosable").forEach((b) => b.setAttribute("aria-disabled", "true"));
  }
}

function askConfirm(option) {
  page.pending = option.id;
  const box = $("confirm");
  box.replaceChildren();
  box.append(el("p", null, "Commit this choice?"), el("p", "confirm-label", option.label));
  const yes = el("button", "commit", "Commit (Enter)");
  yes.type = "button";
  yes.id = "commit";
  yes.addEventListener("click", () => choose(option.id));
  const no = el("button", "cancel", "Change (Esc)");
  no.type = "button";
  no.addEventListener("click", cancelConfirm);
  box.append(yes, no);
  box.hidden = false;
  yes.focus();
}

function cancelConfirm() {
  page.pending = null;
  const box = $("confirm");
  if (box) box.hidden = true;
  (document.getElementById("option-filter") || document.querySelector("#options button"))?.focus();
}

function doUndo() {
  const msg = page.state;
  if (!msg || !msg.can_undo) return;
  send({ type: "undo", serial: msg.serial });
}

// Options that are cards on the table: those cards can be clicked (or focused and Enter).
function markCards(msg) {
  const d = msg.decision;
  if (!d || !d.mine || !d.options || msg.over) return;
  const byCard = new Map();
  for (const o of d.options) {
    if (!o.card) continue;
    byCard.set(o.card, byCard.has(o.card) ? null : o);   // two options for one card: use the buttons
  }
  d.options.forEach((o, i) => {
    const option = o.card ? byCard.get(o.card) : null;
    if (!option) return;
    const node = document.querySelector(`#table [data-card="${CSS.escape(o.card)}"]`);
    if (!node) return;
    node.classList.add("choosable");
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    node.setAttribute("aria-label", `Option ${i + 1}: ${o.label}`);
    node.append(el("span", "option-badge", String(i + 1)));
    node.addEventListener("click", () => choose(o.id));
    node.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); choose(o.id); }
    });
  });
}

function renderResult(msg) {
  const box = $("result");
  if (!msg.over || !msg.result) { box.hidden = true; page.resultShown = false; return; }
  if (page.resultShown) return;
  page.resultShown = true;
  box.replaceChildren(resultEl(msg.result, msg.seats, msg.seat));
  const close = el("button", "close", "Look at the table");
  close.type = "button";
  close.addEventListener("click", () => { box.hidden = true; });
  box.firstChild.append(close);
  box.hidden = false;
  close.focus();
}

// ------------------------------------------------------------------ keyboard

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const typing = ev.target instanceof HTMLInputElement;
  const d = page.state && page.state.decision;
  if (ev.key === "Escape") {
    if (page.pending !== null) { ev.preventDefault(); cancelConfirm(); }
    else if (!$("result").hidden) $("result").hidden = true;
    return;
  }
  if (typing) return;
  if ((ev.key === "u" || ev.key === "U") && page.state && page.state.can_undo) { ev.preventDefault(); doUndo(); return; }
  if (!d || !d.mine || !d.options || page.state.over) return;
  if (d.steps) { stepKey(ev); return; }
  if (/^[1-9]$/.test(ev.key)) {
    const filter = document.getElementById("option-filter");
    if (filter) { filter.focus(); return; }            // many options: type the number in the box
    const k = Number(ev.key);
    if (k <= d.options.length) { ev.preventDefault(); choose(d.options[k - 1].id); }
  } else if (ev.key === "/" && document.getElementById("option-filter")) {
    ev.preventDefault();
    document.getElementById("option-filter").focus();
  }
});

if (!token) {
  $("status").textContent = "This address has no seat token.";
} else {
  connect();
}
export { seatName };
