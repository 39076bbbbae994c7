// The open recording's transcript under the player: its units as lines (choose one to
// play from its start; the arrow keys move between them), the unit being said marked
// and kept in view inside its own box, and links that download it.
import { $, clock, request, span } from "./page.js";

// `seekOpen(start, end)` plays the open recording from `start`; `stillOpen(source)`
// says whether `source` is still the one open; `shown()` runs once a transcript is
// on the page.
export function transcriptPanel({ seekOpen, stillOpen, shown }) {
  const transcriptList = $("transcript");
  let lines = []; // the open recording's units
  let current = -1; // the index of the one marked as being said

  async function load(source) {
    const panel = $("transcript-panel");
    const note = $("transcript-status");
    lines = [];
    current = -1;
    transcriptList.replaceChildren();
    $("transcript-downloads").hidden = true;
    panel.hidden = false;
    note.textContent = "Loading the transcript…";
    let loaded;
    try {
      loaded = await request(`/api/transcript?${new URLSearchParams({ source })}`);
    } catch (error) {
      if (stillOpen(source)) note.textContent = `Error: ${error.message}`;
      return;
    }
    if (!stillOpen(source)) return; // another recording opened since
    lines = loaded;
    transcriptList.replaceChildren(...lines.map(transcriptLine));
    note.textContent = lines.length ? "" : "This recording has no transcript.";
    $("transcript-hint").hidden = !lines.length;
    const downloads = $("transcript-downloads");
    downloads.hidden = !lines.length;
    for (const link of downloads.querySelectorAll("a[data-format]")) {
      link.href = `/api/transcript?${new URLSearchParams({ source, format: link.dataset.format })}`;
    }
    if (lines.length) transcriptList.querySelector("button").tabIndex = 0;
    shown();
  }

  function transcriptLine(line, index) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "line";
    button.tabIndex = -1; // one tab stop for the list; the arrow keys move within it
    button.dataset.index = String(index);
    button.dataset.start = String(line.start);
    button.append(span("time", clock(line.start)));
    if (line.speaker) button.append(span("speaker", line.speaker));
    button.append(span("text", line.text));
    button.addEventListener("click", () => seekOpen(line.start, line.end));
    const item = document.createElement("li");
    item.append(button);
    return item;
  }

  // Highlight the unit being played: the last one that started at or before `seconds`.
  function follow(seconds) {
    let low = 0;
    let high = lines.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (lines[middle].start <= seconds + 0.05) low = middle + 1;
      else high = middle;
    }
    const index = low - 1;
    if (index === current) return;
    const buttons = transcriptList.querySelectorAll("button.line");
    const before = buttons[current];
    if (before) before.removeAttribute("aria-current");
    current = index;
    const now = buttons[index];
    if (!now) return;
    now.setAttribute("aria-current", "true");
    if (!transcriptList.contains(document.activeElement)) {
      rove(now);
      reveal(now);
    }
  }

  // Keep the list's single tab stop on `button`.
  function rove(button) {
    for (const other of transcriptList.querySelectorAll("button.line[tabindex='0']")) {
      other.tabIndex = -1;
    }
    button.tabIndex = 0;
  }

  // Scroll the transcript box (never the page) so that `button` is in view.
  function reveal(button) {
    const top = button.offsetTop;
    const bottom = top + button.offsetHeight;
    const box = transcriptList;
    if (top < box.scrollTop || bottom > box.scrollTop + box.clientHeight) {
      box.scrollTop = Math.max(0, top - box.clientHeight / 3);
    }
  }

  transcriptList.addEventListener("keydown", (event) => {
    const buttons = [...transcriptList.querySelectorAll("button.line")];
    const at = buttons.indexOf(document.activeElement);
    if (at < 0) return;
    const to = {
      ArrowDown: at + 1,
      ArrowUp: at - 1,
      Home: 0,
      End: buttons.length - 1,
      PageDown: at + 10,
      PageUp: at - 10,
    }[event.key];
    if (to === undefined) return;
    event.preventDefault();
    const target = buttons[Math.min(buttons.length - 1, Math.max(0, to))];
    rove(target);
    target.focus();
  });

  return { load, follow };
}
