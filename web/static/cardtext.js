// What a card does, on the table: a card's rule text (the `text` the server puts on every
// card the seat sees, docs/language.md#card-text) as the card's tooltip, and an "i" button
// that opens it large (tap-to-zoom on touch screens). Kept apart from render.js: cardEl
// calls addCardText once per card face; the decision panel calls optionText per option.

let zoom = null;

function zoomDialog() {
  if (zoom) return zoom;
  zoom = document.createElement("dialog");
  zoom.id = "card-zoom";
  zoom.className = "card-zoom";
  zoom.addEventListener("click", () => zoom.close());      // any click closes it
  document.body.append(zoom);
  return zoom;
}

export function zoomCard(card) {
  const d = zoomDialog();
  d.replaceChildren();
  const h = document.createElement("h2");
  h.textContent = card.name;
  const p = document.createElement("p");
  p.className = "card-zoom-text";
  p.textContent = card.text;
  d.append(h, p);
  if (card.other_side) {
    const o = document.createElement("p");
    o.className = "card-zoom-other";
    o.textContent = `Other side: ${card.other_side}`;
    d.append(o);
  }
  const hint = document.createElement("p");
  hint.className = "card-zoom-hint";
  hint.textContent = "Click anywhere or press Escape to close";
  d.append(hint);
  d.showModal();
}

// The lines a card's tooltip starts with: its name and what it does.
export function textLines(card) {
  const lines = [card.name];
  if (card.text) lines.push(card.text);
  if (card.other_side) lines.push(`Other side: ${card.other_side}`);
  return lines;
}

export function addCardText(node, card) {
  if (!card.text) return;
  node.dataset.text = card.text;
  const info = document.createElement("button");
  info.type = "button";
  info.className = "card-info";
  info.textContent = "i";
  info.title = "What this card does";
  info.setAttribute("aria-label", `What ${card.name} does`);
  info.addEventListener("click", (ev) => { ev.stopPropagation(); zoomCard(card); });
  node.append(info);
}

export function optionText(button, option) {
  if (option.text) button.title = option.text;
}
