// What every part of the page uses: an element by id, a span of text, seconds as the
// labels show them, and the API's responses (JSON, or server-sent events). Text from
// the index is only ever set as textContent.

export const $ = (id) => document.getElementById(id);

// Seconds as the labels show them: 1:05, 12:30, 1:02:03.
export function clock(seconds) {
  const whole = Math.max(0, Math.floor(Number(seconds) || 0));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function span(className, text) {
  const element = document.createElement("span");
  element.className = className;
  element.textContent = text;
  return element;
}

// A response of the API; one that is not ok throws its one-line detail.
export async function fetched(url, options) {
  const response = await fetch(url, { credentials: "same-origin", ...options });
  if (response.ok) return response;
  const data = await response.json().catch(() => ({}));
  throw new Error(data.detail || `${response.status} ${response.statusText}`);
}

export async function request(url, options) {
  return (await fetched(url, options)).json().catch(() => ({}));
}

// The server-sent events of a streamed response, as [name, data] pairs while they
// arrive (EventSource cannot POST a question). Ends with the response.
export async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    buffered += decoder.decode(value, { stream: !done });
    let end = buffered.indexOf("\n\n");
    while (end >= 0) {
      const fields = {};
      for (const line of buffered.slice(0, end).split("\n")) {
        const colon = line.indexOf(": ");
        if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 2);
      }
      if (fields.event && fields.data !== undefined) yield [fields.event, JSON.parse(fields.data)];
      buffered = buffered.slice(end + 2);
      end = buffered.indexOf("\n\n");
    }
    if (done) return;
  }
}
