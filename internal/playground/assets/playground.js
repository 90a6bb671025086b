// spawngate playground: this script only sends the fields' text to the
// playground and shows its answer. Every verdict is the server's; the
// report is shown in a sandboxed frame that runs no script.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const fields = ["plan", "policy", "checks"];
  const tokenKey = "spawngate-playground-token";
  const form = $("form"), verdict = $("verdict");
  let examples = [];

  const state = () => Object.fromEntries(fields.map((f) => [f, $(f).value]));
  const fill = (s) => fields.forEach((f) => { $(f).value = typeof s[f] === "string" ? s[f] : ""; });

  // The state in the URL fragment: JSON, compressed with deflate-raw when
  // the browser can ("z:"), else plain ("j:"), in base64url.
  const b64url = (bytes) => {
    let s = "";
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };
  const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const piped = async (bytes, stream) => new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
  async function encode(s) {
    const bytes = new TextEncoder().encode(JSON.stringify(s));
    if (typeof CompressionStream === "function") return "z:" + b64url(await piped(bytes, new CompressionStream("deflate-raw")));
    return "j:" + b64url(bytes);
  }
  async function decode(h) {
    const kind = h.slice(0, 2), body = h.slice(2);
    let bytes = unb64url(body);
    if (kind === "z:") bytes = await piped(bytes, new DecompressionStream("deflate-raw"));
    else if (kind !== "j:") throw new Error("not a playground link");
    return JSON.parse(new TextDecoder().decode(bytes));
  }

  // show puts a report into the sandboxed frame, and resolves once it is
  // loaded: the verdict is said with the report it goes with.
  function show(html) {
    const frame = $("report");
    const loaded = new Promise((resolve) => frame.addEventListener("load", resolve, { once: true }));
    frame.srcdoc = html;
    return loaded;
  }

  function announce(kind, text) {
    verdict.dataset.verdict = kind;
    verdict.textContent = text;
  }

  async function judge() {
    const headers = { "Content-Type": "application/json" };
    const token = sessionStorage.getItem(tokenKey);
    if (token) headers.Authorization = "Bearer " + token;
    const s = state();
    document.body.dataset.state = "judging";
    verdict.removeAttribute("data-verdict");
    verdict.textContent = "Judging…";
    try {
      history.replaceState(null, "", "#" + await encode(s));
    } catch (e) { /* the link is a convenience; the judgement goes on */ }
    let res, answer;
    try {
      res = await fetch("/v1/judge", { method: "POST", headers, body: JSON.stringify(s), cache: "no-store", credentials: "same-origin" });
      answer = await res.json();
    } catch (e) {
      await show("");
      announce("error", "Not judged: the playground did not answer" + (res ? " (status " + res.status + ")" : "") + ".");
      document.body.dataset.state = "judged";
      return;
    }
    if (res.status === 401) {
      $("token-fields").hidden = false;
      $("token").focus();
    }
    await show(answer.html || "");
    if (answer.verdict === "pass" || answer.verdict === "block") {
      announce(answer.verdict, answer.summary);
    } else {
      announce("error", "Not judged (status " + res.status + "): " + (answer.error || answer.summary));
    }
    document.body.dataset.state = "judged";
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); judge(); });
  form.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); judge(); }
  });
  $("token").addEventListener("change", () => sessionStorage.setItem(tokenKey, $("token").value));

  // A file dropped on a field is read here, into that field.
  fields.forEach((f) => {
    const area = $(f);
    area.addEventListener("dragover", (e) => {
      if (e.dataTransfer && Array.from(e.dataTransfer.types).includes("Files")) { e.preventDefault(); area.classList.add("dropping"); }
    });
    area.addEventListener("dragleave", () => area.classList.remove("dropping"));
    area.addEventListener("drop", (e) => {
      area.classList.remove("dropping");
      const file = e.dataTransfer && e.dataTransfer.files[0];
      if (!file) return;
      e.preventDefault();
      const reader = new FileReader();
      reader.onload = () => { area.value = reader.result; area.focus(); };
      reader.readAsText(file);
    });
  });

  $("example").addEventListener("change", (e) => {
    const ex = examples[Number(e.target.value)];
    if (!ex) return;
    fill(ex);
    judge();
  });

  $("share").addEventListener("click", async () => {
    const link = location.origin + location.pathname + "#" + await encode(state());
    history.replaceState(null, "", link);
    try {
      await navigator.clipboard.writeText(link);
      $("shared").textContent = "The link is copied.";
    } catch (e) {
      $("shared").textContent = "The link is in the address bar.";
    }
  });

  async function start() {
    $("token").value = sessionStorage.getItem(tokenKey) || "";
    try {
      examples = await (await fetch("/examples")).json();
      examples.forEach((ex, i) => {
        const o = document.createElement("option");
        o.value = String(i);
        o.textContent = ex.name;
        $("example").append(o);
      });
    } catch (e) { /* the page works without them */ }
    const h = location.hash.slice(1);
    if (h) {
      // Filled, not judged: a link any site can open must not make this
      // machine judge what it carries until its user asks.
      try {
        fill(await decode(h));
        announce("filled", "The link's plan and policy are in the fields: press Judge to judge them.");
      } catch (e) {
        announce("error", "This link holds no state the playground can read.");
      }
    }
    document.body.dataset.ready = "true";
  }
  start();
})();
