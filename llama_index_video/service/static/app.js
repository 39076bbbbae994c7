// The page: search and ask the service, show moments as cards, play the cited second;
// the library of recordings, a transcript that follows playback (and the recording's
// chapters and summary, outline.js), the current search's hits marked on a timeline
// under the player, and the moment playing as a deep link in the address bar (to copy)
// and as a clip (to download).
// Plain ES modules, no build step. Text from the index is only ever set as textContent.
import { $, clock, events, fetched, request, span } from "./page.js";
import { pageOutline } from "./outline.js";
import { transcriptPanel } from "./transcript.js";

const players = { video: $("video"), audio: $("audio") };
const nowPlaying = $("now-playing");
const status = $("status");
const timeline = $("timeline");

// What is open in the player, the moment playing in it ({source, start, end}: the
// source as the library names it, end null when not known), the current search's
// hits and its query, and the library's entries once loaded.
const state = {
  open: null,
  player: null,
  moment: null,
  hits: [],
  query: "",
};
// Whether `source` is still the recording open in the player.
const stillOpen = (source) => Boolean(state.open && state.open.source === source);
// The open recording's chapters and summary (outline.js), and its transcript
// (transcript.js).
const outline = pageOutline({ seekOpen, stillOpen });
const transcript = transcriptPanel({
  seekOpen,
  stillOpen,
  shown: () => {
    if (state.player) follow(state.player.currentTime);
  },
});

// Each player seeks to the latest requested second once its metadata is known, and
// drives the transcript highlight while it plays.
for (const player of Object.values(players)) {
  player.addEventListener("loadedmetadata", () => {
    seek(player);
    if (player === state.player) {
      drawTimeline();
      showMoment(); // the clip's end may need the duration just learnt
    }
  });
  player.addEventListener("timeupdate", () => {
    if (player === state.player) follow(player.currentTime);
  });
  player.addEventListener("error", () => {
    if (player.src) nowPlaying.textContent = "This file cannot be played in this browser.";
  });
}

function seek(player) {
  if (player.pendingStart === undefined) return;
  player.currentTime = player.pendingStart;
  player.pendingStart = undefined;
  const playing = player.play();
  if (playing) playing.catch(() => {}); // autoplay refused: the controls still work
}

// Play a recording ({source, media_url, media_type, duration}) from `start` seconds;
// `end` is where the moment ends, when known.
function play(recording, start, title, end = null) {
  const kind = (recording.media_type || "").startsWith("audio/") ? "audio" : "video";
  const player = players[kind];
  for (const [name, other] of Object.entries(players)) {
    if (name !== kind) {
      other.pause();
      other.hidden = true;
    }
  }
  player.hidden = false;
  player.pendingStart = Math.max(0, Number(start) || 0);
  if (player.getAttribute("src") !== recording.media_url) {
    player.src = recording.media_url;
    player.load();
  } else if (player.readyState >= HTMLMediaElement.HAVE_METADATA) {
    seek(player);
  }
  const changed = !state.open || state.open.media_url !== recording.media_url;
  state.player = player;
  if (changed) {
    state.open = {
      source: recording.source,
      media_url: recording.media_url,
      duration: Number(recording.duration) || null,
    };
    transcript.load(recording.source);
    outline.open(recording.source);
  }
  drawTimeline();
  const listed = state.library && state.library.find((e) => e.media_url === recording.media_url);
  const source = listed ? listed.source : recording.source_path || recording.source;
  state.moment = { source, start: player.pendingStart, end };
  showMoment();
  nowPlaying.textContent = title;
  player.scrollIntoView({ block: "nearest" });
}

function markCurrent(element) {
  for (const current of document.querySelectorAll(".card[aria-current], .source[aria-current]")) {
    current.removeAttribute("aria-current");
  }
  element.setAttribute("aria-current", "true");
}

// Mark what is being said at `seconds`: the chapter and the transcript line.
function follow(seconds) {
  outline.follow(seconds);
  transcript.follow(seconds);
}

// Jump the open recording to `seconds` and play from there (to `end`, when known).
function seekOpen(seconds, end = null) {
  const player = state.player;
  if (!player) return;
  if (state.moment) {
    state.moment = { source: state.moment.source, start: seconds, end };
    showMoment();
  }
  if (player.readyState >= HTMLMediaElement.HAVE_METADATA) {
    player.pendingStart = seconds;
    seek(player);
  } else {
    player.pendingStart = seconds; // applied on loadedmetadata
  }
  follow(seconds);
}

// ---- Timeline of the current search's hits -----------------------------------------

function drawTimeline() {
  const box = $("timeline-box");
  const open = state.open;
  const player = state.player;
  const duration =
    player && Number.isFinite(player.duration) && player.duration > 0
      ? player.duration
      : open && open.duration;
  const hits = open
    ? state.hits
        .filter((hit) => hit.media_url === open.media_url && typeof hit.start === "number")
        .sort((a, b) => a.start - b.start)
    : [];
  if (!hits.length || !duration) {
    box.hidden = true;
    timeline.replaceChildren();
    return;
  }
  const count = hits.length === 1 ? "1 hit" : `${hits.length} hits`;
  $("timeline-caption").textContent = `${count} for “${state.query}” in this recording`;
  timeline.replaceChildren(
    ...hits.map((hit, index) => {
      const share = Math.min(1, Math.max(0, hit.start / duration));
      const marker = document.createElement("button");
      marker.type = "button";
      marker.className = "marker";
      marker.dataset.start = String(hit.start);
      // Inside the track at both ends: the marker's left edge runs from 0 to 100% - 12px.
      marker.style.left = `calc(${(share * 100).toFixed(3)}% - ${(share * 12).toFixed(2)}px)`;
      const text = (hit.text || "").slice(0, 120);
      const label = `Hit ${index + 1} at ${clock(hit.start)}${text ? `: ${text}` : ""}`;
      marker.setAttribute("aria-label", label);
      marker.title = label;
      marker.addEventListener("click", () => seekOpen(hit.start, hit.end));
      return marker;
    }),
  );
  box.hidden = false;
}

function showHits(query, hits) {
  state.query = query;
  state.hits = hits;
  drawTimeline();
}

// ---- Library -----------------------------------------------------------------------

// A path shows its file name; a link shows itself.
const nameOf = (source) => (source.includes("://") ? source : source.split(/[\\/]/).pop());

function moments(counts) {
  const parts = Object.entries(counts || {}).sort((a, b) => b[1] - a[1]);
  const total = parts.reduce((sum, [, n]) => sum + n, 0);
  if (!total) return "no moments";
  const detail = parts.map(([modality, n]) => `${n} ${modality}`).join(", ");
  return `${total} ${total === 1 ? "moment" : "moments"} (${detail})`;
}

function libraryEntry(entry) {
  const playable = Boolean(entry.media_url);
  const element = document.createElement(playable ? "button" : "div");
  element.className = "source";
  const name = nameOf(entry.source);
  const details = [entry.status];
  if (typeof entry.duration === "number") details.push(clock(entry.duration));
  details.push(moments(entry.moments));
  if (entry.language) details.push(entry.language);
  if (entry.speakers && entry.speakers.length) details.push(entry.speakers.join(", "));
  if (!playable && entry.status === "indexed") details.push("not playable");
  element.append(span("name", name));
  if (name !== entry.source) element.append(span("path", entry.source));
  element.append(span("meta", details.join(" · ")));
  if (entry.reason) element.append(span("reason", entry.reason));
  if (playable) {
    element.type = "button";
    element.dataset.source = entry.source;
    element.addEventListener("click", () => {
      play(entry, 0, `Playing ${name}`);
      markCurrent(element);
    });
  }
  const item = document.createElement("li");
  item.append(element);
  return item;
}

async function loadLibrary() {
  const note = $("library-status");
  note.textContent = "Loading the library…";
  try {
    const entries = await request("/api/library");
    state.library = entries;
    $("library").replaceChildren(...entries.map(libraryEntry));
    openLinkedMoment();
    note.textContent = entries.length ? "" : "The index is empty: run ingest first.";
  } catch (error) {
    note.textContent = `Error: ${error.message}`;
  }
}

$("library-refresh").addEventListener("click", loadLibrary);
loadLibrary();

// Deep links, to paste into a chat: /#source=talk.mp4&t=94 opens the player at that
// second (a source as the library names it, its file's path as search hits name it, or
// its file name; t in seconds or m:ss, and an optional end=, the moment's end for its
// download); /?q=... runs a search.
function openLinkedMoment() {
  const link = new URLSearchParams(location.hash.slice(1));
  const wanted = link.get("source");
  if (!wanted || !state.library) return;
  const entry = state.library.find(
    (e) =>
      e.media_url && (e.source === wanted || e.path === wanted || nameOf(e.source) === wanted),
  );
  if (!entry) {
    status.textContent = `No playable recording is named ${wanted}.`;
    return;
  }
  const end = link.has("end") ? timeOf(link.get("end")) : null;
  play(entry, timeOf(link.get("t")), `Playing ${nameOf(entry.source)}`, end);
}
window.addEventListener("hashchange", openLinkedMoment);

// Seconds of "94", "94.5", "1:34" or "1:01:34"; 0 for anything else.
function timeOf(text) {
  return (text || "").split(":").reduce((total, part) => total * 60 + Number(part), 0) || 0;
}

// A link's number of seconds: at most two decimals, no trailing zeros.
function shown(time) {
  return String(Math.round(time * 100) / 100);
}

// The deep link of what is playing into the address bar, and its clip into the
// download link: the moment's own end, else 30 s on (within the recording).
function showMoment() {
  const moment = state.moment;
  if (!moment) return;
  const name = nameOf(moment.source);
  const named = (state.library || []).filter((e) => e.media_url && nameOf(e.source) === name);
  const link = new URLSearchParams({
    source: named.length === 1 ? name : moment.source,
    t: shown(moment.start),
  });
  const ends = moment.end !== null && moment.end > moment.start;
  if (ends) link.set("end", shown(moment.end));
  history.replaceState(null, "", `${location.pathname}${location.search}#${link}`);
  const player = state.player;
  const duration =
    player && Number.isFinite(player.duration) && player.duration > 0
      ? player.duration
      : state.open && state.open.duration;
  const end = ends ? moment.end : Math.min(moment.start + 30, duration || Infinity);
  const clip = { source: moment.source, start: shown(moment.start), end: shown(end) };
  $("download-moment").href = `/api/clip?${new URLSearchParams(clip)}`;
  $("copy-status").textContent = "";
  $("link-fallback").hidden = true;
  $("moment-tools").hidden = false;
}

// Copy the address bar's deep link; where the clipboard is refused (a page served
// over plain http to another machine has none), show it selected in a text field.
$("copy-link").addEventListener("click", async () => {
  const link = location.href;
  try {
    await navigator.clipboard.writeText(link);
    $("copy-status").textContent = "Link copied.";
  } catch {
    const field = $("link-field");
    field.value = link;
    $("link-fallback").hidden = false;
    field.focus();
    field.select();
    $("copy-status").textContent = "Copy the link below.";
  }
});

// ---- Search and ask ----------------------------------------------------------------

function card(moment, text) {
  const playable = Boolean(moment.media_url) && moment.start !== null;
  const element = document.createElement(playable ? "button" : "div");
  element.className = "card";
  if (playable) {
    element.type = "button";
    element.dataset.start = String(moment.start);
    element.dataset.end = String(moment.end ?? moment.start);
    element.dataset.source = moment.source;
    element.append(span("visually-hidden", "Play "));
    element.addEventListener("click", () => {
      play(moment, moment.start, `Playing ${moment.label}`, moment.end);
      markCurrent(element);
    });
  }
  if (moment.frame_url) {
    const image = document.createElement("img");
    image.src = moment.frame_url;
    image.alt = "";
    image.loading = "lazy";
    image.width = 160;
    image.height = 90;
    element.append(image);
  }
  const body = span("body", "");
  body.append(span("label", moment.label));
  if (text) body.append(span("text", text));
  const details = [moment.modality];
  if (moment.speaker) details.push(moment.speaker);
  if (typeof moment.score === "number") details.push(`score ${moment.score.toFixed(2)}`);
  if (typeof moment.confidence === "number") {
    details.push(`confidence ${Math.round(moment.confidence * 100)}%`);
  }
  if (!playable) details.push("not playable");
  body.append(span("meta", details.join(" · ")));
  element.append(body);
  const item = document.createElement("li");
  item.append(element);
  if (playable && moment.end !== null) {
    const source = moment.source_path || moment.source;
    const link = document.createElement("a");
    link.className = "download";
    link.href = `/api/clip?${new URLSearchParams({ source, start: moment.start, end: moment.end })}`;
    link.download = "";
    link.textContent = "Download this moment";
    item.append(link);
  }
  return item;
}

function show(list, moments, textOf) {
  list.replaceChildren(...moments.map((moment) => card(moment, textOf(moment))));
}

async function run(form, work) {
  const button = form.querySelector("button");
  button.disabled = true;
  status.textContent = "Working…";
  try {
    status.textContent = await work();
  } catch (error) {
    status.textContent = `Error: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

// The text on the moment's frame (context units of modality "ocr"), unless it is the hit.
const onScreen = (hit) =>
  (hit.context || [])
    .filter((unit) => unit.modality === "ocr" && unit.text !== hit.text)
    .map((unit) => `On screen: ${unit.text.split("\n").join("; ")}`);
const hitText = (hit) => [hit.text || "", ...onScreen(hit)].filter(Boolean).join(" — ");

// The search's options as /api/search (and a search link) take them: `speaker` and
// `language` when named, `by_chapter` and `by_named_speaker` when checked.
const CHECKED_OPTIONS = { by_chapter: "search-by-chapter", by_named_speaker: "search-by-named-speaker" };
function searchOptions() {
  const options = {};
  const speaker = $("search-speaker").value.trim();
  if (speaker) options.speaker = speaker;
  const language = $("search-language").value.trim();
  if (language) options.language = language;
  for (const [option, id] of Object.entries(CHECKED_OPTIONS)) {
    if ($(id).checked) options[option] = "true";
  }
  return options;
}

$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const query = $("search-input").value.trim();
  if (!query) {
    status.textContent = "Type something to search for.";
    return;
  }
  const options = searchOptions();
  history.replaceState(null, "", `?${new URLSearchParams({ q: query, ...options })}${location.hash}`);
  run(event.currentTarget, async () => {
    const asked = new URLSearchParams({ q: query, top_k: 8, ...options });
    const hits = await request(`/api/search?${asked}`);
    $("answer").hidden = true;
    show($("results"), hits, hitText);
    showHits(query, hits);
    return hits.length ? `${hits.length} moments found.` : "No relevant moments.";
  });
});

$("ask-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const question = $("ask-input").value.trim();
  if (!question) {
    status.textContent = "Type a question to ask.";
    return;
  }
  // The answer keeps to the speakers and languages of the search options, as a search does.
  const { language, speaker, by_named_speaker: byNamedSpeaker } = searchOptions();
  const asked = { question };
  if (language) asked.language = language;
  if (speaker) asked.speaker = speaker;
  if (byNamedSpeaker) asked.by_named_speaker = true;
  run(event.currentTarget, async () => {
    // The answer appears as the model writes it (/api/ask/stream); its citations are
    // checked as a whole, so they come with the last event, the /api/ask object.
    const response = await fetched("/api/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(asked),
    });
    const text = $("answer-text");
    text.textContent = "";
    $("citations").replaceChildren();
    $("results").replaceChildren();
    $("answer").hidden = false;
    let answer = null;
    for await (const [name, data] of events(response)) {
      if (name === "delta") {
        text.textContent += data.text;
        status.textContent = "Writing the answer…";
      } else if (name === "answer") {
        answer = data;
      } else if (name === "error") {
        throw new Error(data.detail);
      }
    }
    if (!answer) throw new Error("the answer stopped before it was complete");
    // Without a language model the answer text lists the moments for a terminal;
    // here the cited cards below show them, so say it in one line instead.
    text.textContent =
      answer.model || !answer.found
        ? answer.answer
        : "No language model is configured: these are the most relevant moments.";
    const quoted = (citation) => {
      const hit = answer.hits.find(
        (h) => h.source === citation.source && h.start === citation.start,
      );
      return hit ? hitText(hit) : "";
    };
    show($("citations"), answer.citations, quoted);
    show($("results"), answer.hits, hitText);
    showHits(question, answer.hits);
    return answer.found ? "Answered." : "Not found in the index.";
  });
});

const linked = new URLSearchParams(location.search);
if (linked.get("q")) {
  $("search-input").value = linked.get("q");
  $("search-speaker").value = linked.get("speaker") || "";
  $("search-language").value = linked.get("language") || "";
  for (const [option, id] of Object.entries(CHECKED_OPTIONS)) {
    $(id).checked = linked.get(option) === "true";
  }
  $("search-options").open = ["speaker", "language", ...Object.keys(CHECKED_OPTIONS)].some((o) =>
    linked.has(o),
  );
  $("search-form").requestSubmit();
}
