// rulesvm web table: a compound decision (`choose` with `steps:`) picked one step at a time.
// The server sends, for the deciding seat only, each step's prompt and each option's picks
// (decision.steps.parts[i] for option i). The picks stay in this page until the last step
// is picked: only then is the whole option sent, as any other choice (table.js's choose),
// so no other seat can see a half-made secret choice. Back (or Backspace) takes a pick back;
// the box below the picks also takes a whole option typed at once (e.g. "R2 A+ AT D-").
import { el } from "./render.js";

const steps = { serial: null, picked: [], box: null, d: null, choose: null };

function normal(text) { return String(text).toLowerCase().split(/\s+/).filter(Boolean).join(" "); }

// The options whose first picks are the picks made so far.
function matching() {
  const k = steps.picked.length;
  const out = [];
  steps.d.steps.parts.forEach((parts, i) => {
    if (steps.picked.every((p, j) => parts[j] === p) && parts.length >= k) out.push(i);
  });
  return out;
}

// What the current step offers: each pick once, in the options' order.
function choices() {
  const k = steps.picked.length;
  if (k >= steps.d.steps.prompts.length) return [];
  const seen = [];
  for (const i of matching()) {
    const part = steps.d.steps.parts[i][k];
    if (!seen.includes(part)) seen.push(part);
  }
  return seen;
}

function complete() { return steps.picked.length === steps.d.steps.prompts.length; }

function pick(label) {
  if (!choices().includes(label)) return;
  steps.picked.push(label);
  if (complete()) {
    draw(false);
    steps.choose(steps.d.options[matching()[0]].id);      // asks to confirm first where the game says so
  } else {
    draw(true);
  }
}

function back() {
  if (!steps.picked.length || document.querySelector("#decision.sent")) return;
  steps.picked.pop();
  const confirm = document.getElementById("confirm");
  if (confirm) confirm.hidden = true;
  draw(true);
}

// Typed text: a whole option (commits it), or a pick of this step (its label or number).
function typed(text) {
  const want = normal(text);
  if (!want) return;
  const whole = steps.d.options.findIndex((o) => normal(o.label) === want);
  if (whole >= 0 && !/^\d+$/.test(want)) {
    steps.choose(steps.d.options[whole].id);
    return;
  }
  const offered = choices();
  const k = /^\d+$/.test(want) ? Number(want) : 0;
  const starts = offered.filter((c) => normal(c).startsWith(want));
  const found = k >= 1 && k <= offered.length ? offered[k - 1] : (starts.length === 1 ? starts[0] : null);
  if (found) pick(found);
  else {
    const input = document.getElementById("step-type");
    if (input) input.setCustomValidity("Not a pick of this step");
    input?.reportValidity();
  }
}

// The picks so far, the current step and its buttons (in #step-area, redrawn on each pick).
function draw(focus) {
  const area = steps.box.querySelector("#step-area");
  area.replaceChildren();
  const prompts = steps.d.steps.prompts;
  const trail = el("ol", "step-trail");
  trail.id = "step-trail";
  trail.setAttribute("aria-label", "Your picks so far");
  prompts.forEach((prompt, j) => {
    const li = el("li", j < steps.picked.length ? "done" : (j === steps.picked.length ? "current" : "todo"));
    li.append(el("span", "step-name", prompt), el("span", "step-pick", j < steps.picked.length ? steps.picked[j] : "…"));
    trail.append(li);
  });
  area.append(trail);
  if (complete()) {
    area.append(el("p", "step-done", "Your choice: " + steps.d.options[matching()[0]].label));
  } else {
    const k = steps.picked.length;
    area.append(el("p", "step-title", `Step ${k + 1} of ${prompts.length}: ${prompts[k]}`));
  }
  const list = el("ol", "options");
  list.id = "options";
  choices().forEach((label, i) => {
    const li = el("li");
    const b = el("button", "option");
    b.type = "button";
    b.dataset.pick = label;
    b.append(el("kbd", null, String(i + 1)), el("span", "option-label", label));
    b.addEventListener("click", () => pick(label));
    li.append(b);
    list.append(li);
  });
  area.append(list);
  const backButton = el("button", "step-back", "Back: take back a pick (Backspace)");
  backButton.type = "button";
  backButton.id = "step-back";
  backButton.disabled = steps.picked.length === 0;
  backButton.addEventListener("click", back);
  area.append(backButton);
  if (focus) list.querySelector("button")?.focus({ preventScroll: true });
}

// Draws the decision panel of a compound decision into `box` (title, prompt, picks, the
// confirm box); `choose(optionId)` sends the whole option. Picks survive redraws of the
// same decision (same serial), and start again for a new one.
export function renderSteps(box, d, serial, choose, focus) {
  if (steps.serial !== serial) steps.picked = [];
  Object.assign(steps, { serial, box, d, choose });
  box.append(el("h2", "decision-title", d.secret ? "Your secret choice" : "Your turn"));
  box.append(el("p", "prompt", d.prompt));
  if (d.help) box.append(el("p", "help", d.help));
  const area = el("div", "steps");
  area.id = "step-area";
  box.append(area);
  const input = el("input", "filter");
  input.type = "text";
  input.id = "step-type";
  input.placeholder = "Type a pick or a whole choice";
  input.setAttribute("aria-label", "Type a pick or the whole choice");
  input.autocomplete = "off";
  input.addEventListener("input", () => input.setCustomValidity(""));
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") { ev.preventDefault(); typed(input.value); input.value = ""; }
    else if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); input.blur(); }
  });
  box.append(input);
  const confirm = el("div", "confirm");
  confirm.id = "confirm";
  confirm.hidden = true;
  box.append(confirm);
  draw(focus);
}

// A key pressed outside the typing box while a compound decision is this seat's: 1-9 pick,
// Backspace takes a pick back. True when the key was used.
export function stepKey(ev) {
  if (!steps.d || document.querySelector("#decision.sent")) return false;
  if (/^[1-9]$/.test(ev.key)) {
    const offered = choices();
    const k = Number(ev.key);
    if (k <= offered.length) { ev.preventDefault(); pick(offered[k - 1]); return true; }
  } else if (ev.key === "Backspace") {
    ev.preventDefault();
    back();
    return true;
  }
  return false;
}
