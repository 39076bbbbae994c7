// The page: search and ask the service, show moments as cards, play the cited second.
// Plain script, no build step. Text from the index is only ever set as textContent.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const players = { video: $("video"), audio: $("audio") };
  const nowPlaying = $("now-playing");
  const status = $("status");

  // Each player seeks to the latest requested second once its metadata is known.
  for (const player of Object.values(players)) {
    player.addEventListener("loadedmetadata", () => seek(player));
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

  function play(moment, button) {
    const kind = (moment.media_type || "").startsWith("audio/") ? "audio" : "video";
    const player = players[kind];
    for (const [name, other] of Object.entries(players)) {
      if (name !== kind) {
        other.pause();
        other.hidden = true;
      }
    }
    player.hidden = false;
    player.pendingStart = Math.max(0, Number(moment.start) || 0);
    if (player.getAttribute("src") !== moment.media_url) {
      player.src = moment.media_url;
      player.load();
    } else if (player.readyState >= HTMLMediaElement.HAVE_METADATA) {
      seek(player);
    }
    for (const current of document.querySelectorAll(".card[aria-current]")) {
      current.removeAttribute("aria-current");
    }
    button.setAttribute("aria-current", "true");
    nowPlaying.textContent = `Playing ${moment.label}`;
    player.scrollIntoView({ block: "nearest" });
  }

  function span(className, text) {
    const element = document.createElement("span");
    element.className = className;
    element.textContent = text;
    return element;
  }

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
      element.addEventListener("click", () => play(moment, element));
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
    if (!playable) details.push("not playable");
    body.append(span("meta", details.join(" · ")));
    element.append(body);
    const item = document.createElement("li");
    item.append(element);
    return item;
  }

  function show(list, moments, textOf) {
    list.replaceChildren(...moments.map((moment) => card(moment, textOf(moment))));
  }

  async function request(url, options) {
    const response = await fetch(url, { credentials: "same-origin", ...options });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(data.detail || `${response.status} ${response.statusText}`);
    return data;
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

  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("search-input").value.trim();
    if (!query) {
      status.textContent = "Type something to search for.";
      return;
    }
    run(event.currentTarget, async () => {
      const hits = await request(`/api/search?${new URLSearchParams({ q: query, top_k: 8 })}`);
      $("answer").hidden = true;
      show($("results"), hits, hitText);
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
    run(event.currentTarget, async () => {
      const answer = await request("/api/ask", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ question }),
      });
      // Without a language model the answer text lists the moments for a terminal;
      // here the cited cards below show them, so say it in one line instead.
      $("answer-text").textContent =
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
      $("answer").hidden = false;
      return answer.found ? "Answered." : "Not found in the index.";
    });
  });
})();
