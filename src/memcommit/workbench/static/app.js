// memcommit workbench page: asks the server for memcommit's recall() Context and shows it.
// The page never ranks or packs anything itself; memory text is untrusted and is only ever
// written with textContent.
"use strict";

const PLAY_SECONDS = 30;
const STAGE_SECONDS = 10;
const STORAGE = {
  notes: "memcommit.workbench.notes",
  prediction: "memcommit.workbench.prediction",
  baseline: "memcommit.workbench.baseline",
};
const STORE_LABELS = {
  fact: "Semantic",
  event: "Episodic",
  procedure: "Procedural",
  working: "Working",
};
const STORE_CHOICES = {
  semantic: "Semantic facts",
  episodic: "Episodic events",
  procedural: "Procedural steps",
  working: "Working context",
  all: "All stores",
};
const REASONS = {
  other_tenant: "another tenant's record (hard filter)",
  store_type: "not in the chosen memory store",
  other_scope: "not in the chosen scopes",
  other_tier: "not in the chosen tiers",
  previous_session: "from a previous session",
  too_old: "older than the maximum age",
  older_key_version: "a newer record has the same key",
  no_longer_holds: "no longer holds",
  archived: "archived (not in the chosen tiers)",
  no_lexical_match: "shares no term with the question",
  over_budget: "does not fit the remaining word budget",
  over_record_limit: "maximum retrieved records reached",
  claimed_by_pool: "already taken by an earlier pool",
};
const STAGE_INDEX = { stored: 0, filters: 1, ranking: 2, packing: 3 };
const LIVE_CARDS_PER_LANE = 12;

const $ = (id) => document.getElementById(id);

const state = {
  config: null,
  selection: null, // what recall() selected (fast)
  rows: null, // one page of every memory explained, with counts over all of them
  request: 0,
  offset: 0,
  baseline: null,
  shownStage: -1,
};

const playback = { base: 0, since: null, speed: 1, timer: null };

// ---------- small DOM helpers (text only, never HTML) ----------

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function fmt(value) {
  return value === null || value === undefined ? "—" : Number(value).toFixed(3);
}

function reasonText(code) {
  return REASONS[code] || code;
}

function readStorage(key, fallback) {
  try {
    const value = window.localStorage.getItem(key);
    return value === null ? fallback : value;
  } catch (err) {
    return fallback;
  }
}

function writeStorage(key, value) {
  try {
    if (value === null) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch (err) {
    showError("This browser refused to store notes locally: " + err.message);
  }
}

// ---------- settings ----------

function checkedValues(containerId) {
  return Array.from($(containerId).querySelectorAll("input[type=checkbox]"))
    .filter((box) => box.checked)
    .map((box) => box.value);
}

function settings() {
  const s = {
    store: $("store").value,
    tenant: $("tenant").value,
    previous: $("previous").checked ? "1" : "0",
    max_age: $("max_age").value,
    latest: $("latest").checked ? "1" : "0",
    recency: $("recency").value,
    budget: $("budget").value,
    max_records: $("max_records").value,
  };
  if (state.config.mode === "live") {
    s.query = $("query").value;
    s.session = $("session").value;
    s.kinds = checkedValues("kinds").join(",");
    s.tiers = checkedValues("tiers").join(",");
    s.scopes = $("scopes").value;
    s.pools = $("pools").value;
    s.scorer = $("scorer").value;
  } else {
    s.question = $("question").value;
  }
  return s;
}

function describeSettings(s) {
  const tenant = state.config.tenants.find((t) => t.id === s.tenant);
  const parts = [
    STORE_CHOICES[s.store] || s.store,
    tenant ? tenant.label : s.tenant,
    s.previous === "1" ? "previous sessions on" : "previous sessions off",
    s.max_age === "" ? "no age limit" : "age ≤ " + s.max_age + " h",
    s.latest === "1" ? "latest per key" : "all key versions",
    "recency " + s.recency,
    "budget " + s.budget + " words",
    "max " + s.max_records + " records",
  ];
  return parts.join(" · ");
}

function questionText(s) {
  if (state.config.mode === "live") return s.query;
  const q = state.config.questions.find((x) => x.id === s.question);
  return q ? q.text : s.question;
}

// ---------- talking to the server ----------

class ApiError extends Error {}

async function getJSON(path) {
  let response;
  let body;
  try {
    response = await fetch(path);
    body = await response.json();
  } catch (err) {
    throw new ApiError("The workbench server did not answer: " + err.message);
  }
  if (!response.ok) {
    const e = body.error || {};
    throw new ApiError((e.field ? e.field + ": " : "") + (e.message || "request failed"));
  }
  return body;
}

async function recompute(rowsOnly) {
  // The selection first (the tray is ready at once), then the explained rows for the table.
  const ticket = ++state.request;
  document.body.dataset.busy = "1";
  const params = new URLSearchParams(settings());
  try {
    if (!rowsOnly) {
      const selection = await getJSON("/api/recall?" + params.toString());
      if (ticket !== state.request) return;
      state.selection = selection;
      state.rows = null;
      state.shownStage = -1;
      renderResult();
    }
    params.set("offset", String(state.offset));
    params.set("outcome", $("outcome").value);
    const rows = await getJSON("/api/rows?" + params.toString());
    if (ticket !== state.request) return;
    state.rows = rows;
    state.shownStage = -1;
    renderResult();
    showError(null);
  } catch (err) {
    if (ticket !== state.request) return;
    if (!(err instanceof ApiError)) throw err;
    showError(err.message);
  } finally {
    if (ticket === state.request) document.body.dataset.busy = "0";
  }
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

// ---------- playback ----------

function reducedMotion() {
  return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
}

function elapsed() {
  if (playback.since === null) return playback.base;
  const run = ((performance.now() - playback.since) / 1000) * playback.speed;
  return Math.min(PLAY_SECONDS, playback.base + run);
}

function settle() {
  playback.base = elapsed();
  if (playback.since !== null) playback.since = performance.now();
}

function stageAt(seconds) {
  return Math.min(3, Math.floor(seconds / STAGE_SECONDS));
}

function startTimer() {
  if (playback.timer === null) playback.timer = window.setInterval(tick, 100);
}

function stopTimer() {
  if (playback.timer !== null) window.clearInterval(playback.timer);
  playback.timer = null;
}

function play() {
  if (playback.since !== null) return;
  if (playback.base >= PLAY_SECONDS) playback.base = 0;
  playback.since = performance.now();
  startTimer();
  tick();
}

function pause() {
  settle();
  playback.since = null;
  stopTimer();
  tick();
}

function nextStage() {
  settle();
  playback.since = null;
  stopTimer();
  playback.base = Math.min(PLAY_SECONDS, (Math.floor(playback.base / STAGE_SECONDS) + 1) * STAGE_SECONDS);
  tick();
}

function restart(autoplay) {
  stopTimer();
  playback.base = 0;
  playback.since = null;
  if (autoplay && !reducedMotion()) play();
  else tick();
}

function setSpeed(value) {
  settle();
  playback.speed = value;
  tick();
}

function tick() {
  const seconds = elapsed();
  if (seconds >= PLAY_SECONDS && playback.since !== null) {
    playback.base = PLAY_SECONDS;
    playback.since = null;
    stopTimer();
  }
  const running = playback.since !== null;
  $("progress").value = seconds;
  $("clock").textContent = seconds.toFixed(1) + " s of " + PLAY_SECONDS + " s";
  $("play").disabled = running;
  $("pause").disabled = !running;
  $("next").disabled = seconds >= PLAY_SECONDS;
  document.body.dataset.playing = running ? "1" : "0";
  const stage = stageAt(seconds);
  document.body.dataset.stage = String(stage);
  document.body.dataset.elapsed = seconds.toFixed(3);
  if (stage !== state.shownStage) {
    state.shownStage = stage;
    renderStage(stage);
  }
}

// ---------- rendering ----------

function laneOf(row, stage) {
  // The furthest lane a card has reached by this stage.
  const reach = row.outcome === "selected" ? 3 : Math.max(0, STAGE_INDEX[row.stage] - 1);
  return Math.min(stage, reach);
}

function excludedBy(row, stage) {
  return row.outcome === "excluded" && stage >= STAGE_INDEX[row.stage];
}

function card(row, stage) {
  const item = el("li", "card");
  item.dataset.id = row.id;
  item.dataset.kind = row.kind;
  const excluded = excludedBy(row, stage);
  if (excluded) item.classList.add("excluded");
  if (row.outcome === "selected" && stage >= 3) item.classList.add("selected");
  item.append(el("strong", "card-id", row.id));
  item.append(el("span", "card-store", STORE_LABELS[row.kind] || row.kind));
  item.append(el("span", "card-tenant", row.tenant_label));
  item.append(el("span", "card-words", row.words + " words"));
  const scored = stage >= 2 && row.score !== null;
  item.append(el("span", "card-score", scored ? "score " + fmt(row.score) : "score —"));
  if (excluded) item.append(el("span", "card-reason", reasonText(row.reason)));
  return item;
}

function renderStage(stage) {
  document.querySelectorAll("#stages li").forEach((li) => {
    const index = Number(li.dataset.stage);
    li.classList.toggle("done", index < stage);
    if (index === stage) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
  });
  renderTray(stage);
  const rows = state.rows;
  const lanes = Array.from(document.querySelectorAll("#diagram .lane"));
  const buckets = [[], [], [], []];
  const list = rows ? rows.rows : [];
  const ordered = stage >= 2 ? rankedRows(list) : list;
  ordered.forEach((row) => buckets[laneOf(row, stage)].push(row));
  const cap = state.config.mode === "live" ? LIVE_CARDS_PER_LANE : Infinity;
  lanes.forEach((lane, index) => {
    const cards = lane.querySelector(".cards");
    const bucket = buckets[index];
    cards.replaceChildren(...bucket.slice(0, cap).map((row) => card(row, stage)));
    if (bucket.length > cap) {
      cards.append(el("li", "more", "… " + (bucket.length - cap) + " more on this page of the table"));
    }
    const reached = rows ? rows.counts.reached[index] : null;
    lane.querySelector(".count").textContent = reached !== null && index <= stage ? "(" + reached + ")" : "";
  });
}

function rankedRows(rows) {
  // Display order only: the server's rows carry recall()'s scores; the page never computes one.
  const position = new Map(state.selection.selected.map((id, i) => [id, i]));
  return rows.slice().sort((a, b) => {
    const pa = position.has(a.id) ? position.get(a.id) : Infinity;
    const pb = position.has(b.id) ? position.get(b.id) : Infinity;
    if (pa !== pb) return pa - pb;
    return (b.score ?? -Infinity) - (a.score ?? -Infinity);
  });
}

function renderTray(stage) {
  const selection = state.selection;
  const tray = $("tray");
  const final = stage >= 3 && selection !== null;
  tray.replaceChildren();
  if (final) {
    const explained = new Map((state.rows ? state.rows.rows : []).map((row) => [row.id, row]));
    selection.selected_memories.forEach((memory) => {
      const item = el("li", "tray-item");
      item.dataset.id = memory.id;
      item.append(el("strong", "card-id", memory.id));
      item.append(el("span", "tray-text", memory.content));
      const pool = Object.keys(selection.context.used).length > 1 ? " · pool " + memory.pool : "";
      const row = explained.get(memory.id);
      const score = row ? " · score " + fmt(row.score) : "";
      item.append(el("span", "card-words", memory.words + " words" + score + pool));
      tray.append(item);
    });
    if (selection.selected.length === 0) {
      tray.append(el("li", "empty", "Empty context: nothing passed every stage. The table says why."));
    }
  }
  $("tray-note").textContent = final
    ? "Final stage. No answer is generated: compare the selected source facts yourself."
    : "The tray is populated at the final stage. No answer is generated: compare the selected source facts yourself.";
  $("coverage").textContent = final ? coverageText(selection) : "";
}

function coverageText(selection) {
  const c = selection.coverage;
  if (!c) return "";
  if (c.declared.length === 0) {
    return "Supporting-fact coverage: this question declares no supporting facts.";
  }
  return (
    "Supporting-fact coverage: " + c.found.length + " of " + c.declared.length +
    " declared (" + c.declared.join(", ") + ")"
  );
}

function rowMeta(row) {
  const parts = [STORE_LABELS[row.kind] || row.kind, row.tenant_label];
  if (row.session) parts.push("session " + row.session);
  if (row.age_hours !== null) parts.push(Number(row.age_hours.toFixed(1)) + " h old");
  parts.push(row.words + " words");
  if (row.key) parts.push("key " + row.key);
  if (state.config.mode === "live") parts.push("scope " + row.scope, "tier " + row.tier);
  return parts.join(" · ");
}

function renderTable() {
  const result = state.rows;
  const body = document.querySelector("#records tbody");
  if (!result) {
    body.replaceChildren();
    return;
  }
  body.replaceChildren(
    ...result.rows.map((row) => {
      const tr = el("tr");
      tr.dataset.id = row.id;
      tr.dataset.outcome = row.outcome;
      tr.append(el("th", "id", row.id));
      tr.firstChild.scope = "row";
      const text = el("td", "text");
      text.append(el("span", "content", row.content));
      text.append(el("span", "meta", rowMeta(row)));
      tr.append(text);
      tr.append(el("td", "num", fmt(row.cosine)));
      tr.append(el("td", "num", fmt(row.score)));
      const outcome = el("td", "outcome");
      if (row.outcome === "selected") {
        outcome.append(el("span", "pill selected", "Selected"));
      } else {
        outcome.append(el("span", "pill excluded", "Excluded"));
        outcome.append(el("span", "reason", " " + reasonText(row.reason) + " "));
        outcome.append(el("code", "reason-code", row.reason));
      }
      tr.append(outcome);
      return tr;
    }),
  );
  const pager = $("pager");
  if (state.config.mode === "live") {
    const first = result.total === 0 ? 0 : result.offset + 1;
    const last = result.offset + result.rows.length;
    $("page-info").textContent = first + "–" + last + " of " + result.total;
    $("prev-page").disabled = result.offset === 0;
    $("next-page").disabled = last >= result.total;
    pager.hidden = false;
  }
}

function summary(s) {
  const selection = state.selection;
  const excluded = state.rows
    ? state.rows.excluded_summary.map((e) => e.id + " " + e.reason).join(", ") +
      (state.rows.counts.excluded > state.rows.excluded_summary.length ? ", …" : "")
    : "";
  return {
    question: questionText(s),
    settings: describeSettings(s),
    selected: selection.selected.slice(),
    coverage: selection.coverage ? coverageText(selection) : "",
    excluded: excluded,
    prediction: $("prediction").value,
  };
}

function renderSummary(container, snap) {
  const body = container.querySelector(".body");
  body.replaceChildren();
  if (!snap) {
    body.append(el("p", "note", "No baseline captured."));
    return;
  }
  const list = el("dl");
  const add = (term, value) => {
    list.append(el("dt", null, term));
    list.append(el("dd", null, value));
  };
  add("Question", snap.question);
  add("Settings", snap.settings);
  add("Selected", snap.selected.length ? snap.selected.join(", ") : "nothing (empty context)");
  if (snap.coverage) add("Coverage", snap.coverage.replace("Supporting-fact coverage: ", ""));
  add("Excluded", snap.excluded || "none");
  if (snap.prediction) add("Prediction", snap.prediction);
  body.append(list);
}

function renderResult() {
  const selection = state.selection;
  const rows = state.rows;
  let status = "Selected by recall() in " + selection.elapsed_ms.toFixed(1) + " ms";
  status += rows
    ? "; every record explained in " + rows.elapsed_ms.toFixed(1) + " ms: " +
      rows.counts.selected + " selected, " + rows.counts.excluded + " excluded."
    : "; explaining every record…";
  if (selection.context.note) status += " " + selection.context.note;
  $("status").textContent = status;
  renderTable();
  renderSummary($("current-panel"), summary(settings()));
  tick();
  renderStage(stageAt(elapsed()));
}

function renderBaseline() {
  renderSummary($("baseline-panel"), state.baseline);
  const has = state.baseline !== null;
  $("capture").disabled = has;
  $("replace").disabled = !has;
  $("clear").disabled = !has;
}

// ---------- baseline, notebook, export ----------

function captureBaseline() {
  if (!state.selection) return;
  state.baseline = summary(settings());
  writeStorage(STORAGE.baseline, JSON.stringify(state.baseline));
  renderBaseline();
}

function clearBaseline() {
  state.baseline = null;
  writeStorage(STORAGE.baseline, null);
  renderBaseline();
}

function recordObservation() {
  if (!state.selection) return;
  const snap = summary(settings());
  const lines = [
    "Question: " + snap.question,
    "Settings: " + snap.settings,
    "Selected: " + (snap.selected.length ? snap.selected.join(", ") : "nothing"),
    "Excluded: " + (snap.excluded || "none"),
  ];
  if (snap.coverage) lines.push(snap.coverage);
  if (snap.prediction) lines.push("Prediction: " + snap.prediction);
  const notes = $("notes");
  notes.value = (notes.value ? notes.value.replace(/\s*$/, "") + "\n\n" : "") + lines.join("\n");
  writeStorage(STORAGE.notes, notes.value);
}

function exportNotes() {
  const parts = ["memcommit workbench notes", ""];
  parts.push("Prediction:", $("prediction").value || "(none)", "");
  if (state.baseline) {
    const b = state.baseline;
    parts.push("Baseline:", b.question, b.settings, "Selected: " + (b.selected.join(", ") || "nothing"), "");
  }
  parts.push("Notebook:", $("notes").value || "(empty)", "");
  const blob = new Blob([parts.join("\n")], { type: "text/plain;charset=utf-8" });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "memcommit-workbench-notes.txt";
  document.body.append(link);
  link.click();
  link.remove();
  window.setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// ---------- fullscreen ----------

function toggleFullscreen() {
  if (document.fullscreenElement) document.exitFullscreen();
  else $("experiment").requestFullscreen().catch((err) => showError("Full screen refused: " + err.message));
}

function fullscreenChanged() {
  $("fullscreen").textContent = document.fullscreenElement ? "Exit full screen" : "Expand experiment";
}

// ---------- live mode extras (read-only) ----------

let liveViewsAsked = 0;

async function loadLiveViews() {
  const asked = ++liveViewsAsked;
  const tenant = "tenant=" + encodeURIComponent($("tenant").value);
  const [log, tiers] = await Promise.all([
    fetch("/api/log?limit=50&" + tenant).then((r) => r.json()),
    fetch("/api/tiers?" + tenant).then((r) => r.json()),
  ]);
  if (log.error || tiers.error) throw new Error((log.error || tiers.error).message);
  if (asked !== liveViewsAsked) return; // another tenant was chosen meanwhile
  document.querySelector("#log tbody").replaceChildren(
    ...log.commits.map((c) => {
      const tr = el("tr");
      [c.seq, c.id, c.time, c.author, c.message, c.changes].forEach((v) => tr.append(el("td", null, v)));
      return tr;
    }),
  );
  document.querySelector("#tier-table tbody").replaceChildren(
    ...tiers.partitions.map((p) => {
      const tr = el("tr");
      tr.append(el("td", null, p.partition));
      ["short", "mid", "long", "archive"].forEach((t) => tr.append(el("td", "num", p.counts[t] || 0)));
      [p.hits, p.warm_hits, p.misses].forEach((n) => tr.append(el("td", "num", n)));
      tr.append(el("td", "num", p.hits + p.warm_hits + p.misses ? p.hit_ratio.toFixed(2) : "—"));
      return tr;
    }),
  );
}

function showLiveViews() {
  loadLiveViews().catch((err) => showError("Could not read the commit log: " + err.message));
}

function checkboxes(containerId, values, checked) {
  const box = $(containerId);
  values.forEach((value) => {
    const id = containerId + "-" + value;
    const input = el("input");
    input.type = "checkbox";
    input.id = id;
    input.value = value;
    input.checked = checked.includes(value);
    const label = el("label", null, value);
    label.htmlFor = id;
    const wrap = el("span", "choice");
    wrap.append(input, label);
    box.append(wrap);
  });
}

// ---------- start ----------

function applyDefaults(d) {
  $("store").value = d.store;
  $("tenant").value = d.tenant;
  $("previous").checked = d.previous;
  $("max_age").value = d.max_age === null ? "" : d.max_age;
  $("latest").checked = d.latest;
  $("recency").value = d.recency;
  $("budget").value = d.budget;
  $("max_records").value = d.max_records;
  if (state.config.mode === "bank") $("question").value = d.question;
}

function showQuestion() {
  if (state.config.mode !== "bank") return;
  const q = state.config.questions.find((x) => x.id === $("question").value);
  $("question-text").textContent = q ? "“" + q.text + "”" : "";
}

function inputChanged() {
  $("recency-value").textContent = Number($("recency").value).toFixed(2);
  showQuestion();
  state.offset = 0;
  restart(true);
  recompute(false);
}

async function start() {
  state.config = await fetch("/api/config").then((r) => r.json());
  const config = state.config;
  config.tenants.forEach((t) => {
    const option = el("option", null, t.label);
    option.value = t.id;
    $("tenant").append(option);
  });
  if (config.mode === "bank") {
    config.questions.forEach((q) => {
      const option = el("option", null, q.label);
      option.value = q.id;
      $("question").append(option);
    });
  } else {
    document.body.classList.add("live");
    $("mode-badge").textContent = "live store";
    document.querySelector("#records caption").textContent =
      "Every memory of the active tenant, page by page, with its cosine, blended score and outcome.";
    $("fixture-caveat").textContent =
      "Live view of a real store through memcommit's recall(), read-only; with the tfidf scorer the score below is exact. No supporting facts are declared, so coverage is not shown.";
    document.querySelector("#diagram .lane-name").textContent = "Store · stored";
    $("question").hidden = true;
    $("query").hidden = false;
    document.querySelector("label[for=question]").htmlFor = "query";
    $("query").value = config.defaults.query;
    $("session").value = config.defaults.session || "";
    $("scopes").value = config.defaults.scopes || "";
    $("pools").value = config.defaults.pools || "";
    config.scorers.forEach((name) => {
      const option = el("option", null, name);
      option.value = name;
      $("scorer").append(option);
    });
    $("scorer").value = config.defaults.scorer;
    checkboxes("kinds", config.kinds, config.defaults.kinds);
    checkboxes("tiers", config.tiers, config.defaults.tiers);
    document.querySelectorAll(".live-only").forEach((node) => (node.hidden = false));
    $("pager").hidden = false;
  }
  applyDefaults(config.defaults);
  if (config.mode !== "bank") {
    showLiveViews();
    $("tenant").addEventListener("change", showLiveViews);
  }
  $("recency-value").textContent = Number($("recency").value).toFixed(2);
  showQuestion();

  $("prediction").value = readStorage(STORAGE.prediction, "");
  $("notes").value = readStorage(STORAGE.notes, "");
  const saved = readStorage(STORAGE.baseline, null);
  try {
    state.baseline = saved ? JSON.parse(saved) : null;
  } catch (err) {
    state.baseline = null;
  }
  renderBaseline();

  const form = $("controls");
  form.addEventListener("input", inputChanged);
  form.addEventListener("submit", (event) => event.preventDefault());
  $("prediction").addEventListener("input", () => writeStorage(STORAGE.prediction, $("prediction").value));
  $("notes").addEventListener("input", () => writeStorage(STORAGE.notes, $("notes").value));
  $("play").addEventListener("click", play);
  $("pause").addEventListener("click", pause);
  $("next").addEventListener("click", nextStage);
  $("restart").addEventListener("click", () => restart(true));
  $("speed").addEventListener("change", () => setSpeed(Number($("speed").value)));
  $("capture").addEventListener("click", captureBaseline);
  $("replace").addEventListener("click", captureBaseline);
  $("clear").addEventListener("click", clearBaseline);
  $("record").addEventListener("click", recordObservation);
  $("export").addEventListener("click", exportNotes);
  $("fullscreen").addEventListener("click", toggleFullscreen);
  document.addEventListener("fullscreenchange", fullscreenChanged);
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && playback.since !== null) pause();
  });
  $("outcome").addEventListener("change", () => {
    state.offset = 0;
    recompute(true);
  });
  $("prev-page").addEventListener("click", () => {
    state.offset = Math.max(0, state.offset - state.rows.limit);
    recompute(true);
  });
  $("next-page").addEventListener("click", () => {
    state.offset += state.rows.limit;
    recompute(true);
  });

  restart(false);
  if (config.mode === "live" && !$("query").value.trim()) {
    $("status").textContent = "Type a question to rank this store's memories.";
  } else {
    await recompute(false);
  }
  document.body.dataset.started = "1";
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((err) => showError("The workbench could not start: " + err.message));
});
