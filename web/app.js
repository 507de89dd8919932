// The daemon's trace list: sorting, choosing traces to compare, and
// recording with live progress. Everything goes to this same origin.
"use strict";
(function () {
  const token = document.querySelector('meta[name="ioshape-token"]')?.content || "";
  const table = document.getElementById("traces");
  const numeric = new Set(["start", "duration", "events", "lost"]);

  if (table) {
    const body = table.tBodies[0];
    let sortKey = "start", ascending = false;
    table.querySelectorAll("th.sortable").forEach((th) => {
      th.addEventListener("click", () => {
        const key = th.dataset.key;
        ascending = sortKey === key ? !ascending : true;
        sortKey = key;
        const rows = Array.from(body.querySelectorAll("tr[data-id]"));
        rows.sort((a, b) => {
          let x = a.dataset[key] || "", y = b.dataset[key] || "";
          if (numeric.has(key)) { x = parseFloat(x) || 0; y = parseFloat(y) || 0; }
          const c = x < y ? -1 : x > y ? 1 : 0;
          return ascending ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
        table.querySelectorAll("th.sortable").forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      });
    });
    const button = document.getElementById("compare");
    const picked = () => Array.from(table.querySelectorAll("input.pick:checked")).map((c) => c.value);
    table.addEventListener("change", () => {
      const n = picked().length;
      button.disabled = n < 2 || n > 8;
    });
    button.addEventListener("click", () => {
      location.href = "/compare?ids=" + picked().map(encodeURIComponent).join(",");
    });
  }

  const form = document.getElementById("record");
  if (!form) return;
  const live = document.getElementById("live");
  const start = document.getElementById("start");
  const stop = document.getElementById("stop");
  let current = null;

  function show(st) {
    if (st.running) {
      live.textContent = (st.ready ? "recording " : "starting the tracer… ") + st.id + ": " +
        st.elapsed_s.toFixed(0) + " s, " + st.events.toLocaleString() + " events, " +
        (st.bytes / 1048576).toFixed(1) + " MiB" + (st.lost_events ? ", " + st.lost_events.toLocaleString() + " LOST" : "");
      return;
    }
    live.textContent = "";
    const msg = "recorded " + st.id + ": " + st.events.toLocaleString() + " events in " + st.elapsed_s.toFixed(1) + " s" +
      (st.end_reason ? " (" + st.end_reason + ")" : "") + (st.lost_events ? ", " + st.lost_events.toLocaleString() + " LOST" : "") +
      (st.error ? " — " + st.error : "");
    live.append(msg + " ");
    if (st.trace_url) {
      const a = document.createElement("a");
      a.href = st.trace_url;
      a.textContent = "open the report";
      live.append(a);
    }
  }

  function follow(id) {
    current = id;
    start.disabled = true;
    stop.disabled = false;
    const es = new EventSource("/api/recordings/" + encodeURIComponent(id) + "/events");
    es.addEventListener("progress", (e) => show(JSON.parse(e.data)));
    es.addEventListener("done", (e) => {
      es.close();
      show(JSON.parse(e.data));
      start.disabled = false;
      stop.disabled = true;
      current = null;
      setTimeout(() => location.reload(), 1500); // the new trace joins the list
    });
    es.onerror = () => es.close();
  }

  async function post(url, body) {
    const res = await fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-IOShape-Token": token },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await res.json();
    if (!res.ok) throw new Error(data.error || res.statusText);
    return data;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const mode = form.mode.value;
    const words = form.target.value.trim().split(/\s+/).filter(Boolean);
    const req = { mode, label: form.label.value.trim(), duration: form.duration.value.trim(),
      launch: form.launch.checked, quiet: form.quiet.value.trim(), cold: form.cold.checked,
      summary: form.summary.checked };
    if (mode === "command") req.command = words;
    if (mode === "pid") req.pids = words.map((w) => parseInt(w, 10));
    if (mode === "name") req.names = words;
    try {
      const st = await post("/api/recordings", req);
      show(st);
      follow(st.id);
    } catch (e) {
      live.textContent = "cannot record: " + e.message;
    }
  });
  stop.addEventListener("click", async () => {
    if (!current) return;
    try { await post("/api/recordings/" + encodeURIComponent(current) + "/stop"); }
    catch (e) { live.textContent = "cannot stop: " + e.message; }
  });
  fetch("/api/recordings/current").then((r) => (r.ok ? r.json() : null)).then((st) => {
    if (st && st.running) follow(st.id);
  });
})();
