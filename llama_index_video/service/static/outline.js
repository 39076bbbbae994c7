// The open recording's outline beside the player: its chapters (choose one to play from
// its start; the one playing is marked) and its extractive summary, every line's
// citation a link that plays the cited moment. Text from the index is only ever set as
// textContent.
import { $, clock, request, span } from "./page.js";

// `seekOpen(start, end)` plays the open recording from `start`; `stillOpen(source)`
// says whether `source` is still the one open.
export function pageOutline({ seekOpen, stillOpen }) {
  const chapterList = $("chapters");
  const SECTIONS = {
    overview: "Overview",
    decisions: "Decisions",
    action_items: "Action items",
    open_questions: "Open questions",
  };
  let chapters = [];

  function chapterItem(chapter) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "chapter";
    button.dataset.start = String(chapter.start);
    button.append(span("time", clock(chapter.start)), span("text", chapter.title || "Untitled"));
    button.addEventListener("click", () => seekOpen(chapter.start, chapter.end));
    const item = document.createElement("li");
    item.append(button);
    return item;
  }

  // One summary line: what it says, who said it and by when (action items), and its
  // citation as a deep link (to copy) that plays the moment here when chosen.
  function summaryLine(source, line) {
    const item = document.createElement("li");
    item.append(span("text", line.text));
    const who = [line.speaker, line.by].filter(Boolean).join(", ");
    if (who) item.append(" ", span("speaker", `(${who})`));
    const link = document.createElement("a");
    link.className = "citation";
    link.href = `#${new URLSearchParams({ source, t: line.start, end: line.end })}`;
    link.textContent = line.label;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      seekOpen(line.start, line.end);
    });
    item.append(" ", link);
    return item;
  }

  function showSummary(source, summary) {
    const parts = [];
    for (const [name, heading] of Object.entries(SECTIONS)) {
      const lines = summary[name] || [];
      if (!lines.length) continue;
      const title = document.createElement("h3");
      title.textContent = heading;
      const list = document.createElement("ul");
      list.className = "summary-lines";
      list.dataset.section = name;
      list.replaceChildren(...lines.map((line) => summaryLine(source, line)));
      parts.push(title, list);
    }
    $("summary").replaceChildren(...parts);
    $("summary-panel").hidden = !parts.length;
  }

  // Mark the chapter being played: the last one that started at or before `seconds`.
  function follow(seconds) {
    const buttons = chapterList.querySelectorAll("button.chapter");
    let index = -1;
    chapters.forEach((chapter, at) => {
      if (chapter.start <= seconds + 0.05) index = at;
    });
    buttons.forEach((button, at) => {
      if (at === index) button.setAttribute("aria-current", "true");
      else button.removeAttribute("aria-current");
    });
  }

  // Show the outline of `source`, just opened (a recording too short to chapter has
  // none; the panels stay hidden when there is nothing to show).
  async function open(source) {
    chapters = [];
    chapterList.replaceChildren();
    $("chapters-panel").hidden = true;
    $("summary-panel").hidden = true;
    $("outline-status").textContent = "";
    const query = new URLSearchParams({ source });
    let found;
    let summary;
    try {
      [found, summary] = await Promise.all([
        request(`/api/chapters?${query}`),
        request(`/api/summary?${query}`),
      ]);
    } catch (error) {
      if (stillOpen(source)) $("outline-status").textContent = `No outline: ${error.message}`;
      return;
    }
    if (!stillOpen(source)) return; // another recording opened since
    chapters = found;
    chapterList.replaceChildren(...found.map(chapterItem));
    $("chapters-panel").hidden = !found.length;
    showSummary(source, summary);
  }

  return { open, follow };
}
