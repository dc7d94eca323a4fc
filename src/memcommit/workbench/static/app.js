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
// Each kind's stripe colour lives in style.css ([data-kind]); these are its words.
const KIND_LABELS = {
  fact: { card: "Semantic", legend: "Semantic facts" },
  event: { card: "Episodic", legend: "Episodic events" },
  procedure: { card: "Procedural", legend: "Procedural steps" },
  working: { card: "Working", legend: "Working context" },
  decision: { card: "Decision", legend: "Decisions" },
  correction: { card: "Correction", legend: "Corrections" },
  summary: { card: "Summary", legend: "Summaries" },
  note: { card: "Note", legend: "Notes" },
};
const BANK_KINDS = ["fact", "event", "procedure", "working"];
const STORE_CHOICES = {
  semantic: "Semantic facts",
  episodic: "Episodic events",
  procedural: "Procedural steps",
  working: "Working context",
  all: "All stores",
};
const REASONS = {
  other_tenant: "another tenant's record (hard filter)",
  other_kind: "not in the chosen memory store",
  other_scope: "not in the chosen scopes",
  other_tier: "not in the chosen tiers",
  previous_session: "from a previous session",
  too_old: "older than the maximum age",
  superseded: "a newer record with the same key still holds",
  no_longer_holds: "no longer holds",
  archived: "archived (not in the chosen tiers)",
  no_lexical_match: "shares no term with the question",
  over_budget: "does not fit the remaining word budget",
  over_record_limit: "maximum retrieved records reached",
  claimed_by_pool: "already taken by an earlier pool",
};
// The page's controls by API field, so an error names the control the user sees.
const FIELD_LABELS = {
  question: "Question",
  query: "Question",
  store: "Memory store",
  tenant: "Active tenant",
  previous: "Include previous sessions",
  max_age: "Maximum age",
  latest: "Keep latest fact per key",
  recency: "Recency weight",
  budget: "Context word budget",
  max_records: "Maximum retrieved records",
  session: "Current session",
  kinds: "Kinds",
  tiers: "Tiers",
  scopes: "Scopes",
  pools: "Pools",
  scorer: "Scorer",
  outcome: "Show records",
};
const STAGE_INDEX = { stored: 0, filters: 1, ranking: 2, packing: 3 };
const FINAL = 3;
// What a row's Outcome cell says while a later stage is still to decide it.
const PROGRESS = ["waiting for the scope filters", "passed the scope filters", "ranked; packing decides"];
const LIVE_CARDS_PER_LANE = 8;
// The tray of a live store draws at most this many selected memories; the table lists them all.
const LIVE_TRAY_CARDS = 50;
// Short ids as the CLI shows them (memcommit.cli.ids): ids begin with their creation time, so
// the digits that tell them apart are at the end; at least this many, after an ellipsis.
const MIN_ID = 7;
const ELLIPSIS = "…";

const $ = (id) => document.getElementById(id);

const state = {
  config: null,
  selection: null, // what recall() selected (fast); its `result` id keys every page of rows
  rows: null, // one page of every memory explained, with counts over all of them
  seq: null, // the newest commit of the store the page has seen (tenants, log and tiers)
  request: 0,
  offset: 0,
  baseline: null,
  shownStage: -1,
  idle: "", // what the status line says while there is no result
  short: new Map(), // full id -> the short id shown
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

function kindLabel(kind, form) {
  return KIND_LABELS[kind] ? KIND_LABELS[kind][form] : kind;
}

function sharedStart(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
}

function shortIds(ids) {
  // Each id -> its shortest suffix that no other id shown shares (at least MIN_ID digits, not
  // all decimal, which would read as a commit seq); ids this short already stay whole.
  const backwards = Array.from(new Set(ids), (id) => Array.from(String(id)).reverse().join("")).sort();
  const shown = new Map();
  backwards.forEach((rev, i) => {
    const near = [backwards[i - 1], backwards[i + 1]].filter((x) => x !== undefined);
    let n = Math.max(MIN_ID, ...near.map((other) => sharedStart(rev, other) + 1));
    while (n < rev.length && /^[0-9]+$/.test(rev.slice(0, n))) n += 1;
    const id = Array.from(rev).reverse().join("");
    shown.set(id, n >= id.length ? id : ELLIPSIS + id.slice(-n));
  });
  return shown;
}

function rememberIds() {
  // Every id the page holds now, shortened against each other.
  const ids = [];
  if (state.selection) ids.push(...state.selection.selected);
  if (state.rows) {
    ids.push(...state.rows.rows.map((row) => row.id), ...state.rows.excluded_summary.map((e) => e.id));
  }
  state.short = shortIds(ids);
}

function shortId(id) {
  return state.short.get(id) || id;
}

function idNode(tag, className, id) {
  // A short id, with the full one to hover over or copy.
  const node = el(tag, className, shortId(id));
  node.title = id;
  return node;
}

function humanAge(hours) {
  // "40 min", "7.5 h", "48 h", "12 days", "6 months", "2 years": the unit a person reads.
  if (hours === null || hours === undefined) return null;
  if (hours < 1) return Math.round(hours * 60) + " min";
  if (hours < 10) return Number(hours.toFixed(1)) + " h";
  if (hours < 72) return Math.round(hours) + " h";
  const days = hours / 24;
  if (days < 60) return Math.round(days) + " days";
  if (days < 730) return Math.round(days / 30.44) + " months";
  return Number((days / 365.25).toFixed(1)) + " years";
}

function byId(a, b) {
  return String(a.id).localeCompare(String(b.id), undefined, { numeric: true });
}

// ---------- stages: what each stage decides, and what is shown when ----------

function reached(row) {
  // The furthest diagram lane a row gets to: selected rows reach the tray.
  return row.outcome === "selected" ? FINAL : Math.max(0, STAGE_INDEX[row.stage] - 1);
}

function decidedAt(row) {
  // The stage whose result says this row is in or out.
  return row.outcome === "selected" ? FINAL : reached(row) + 1;
}

function staged(node, from, until) {
  // Shown from stage `from` on, and only before stage `until` (revealStaged keeps it so).
  if (from !== null) node.dataset.from = String(from);
  if (until !== null) node.dataset.until = String(until);
  return node;
}

function revealStaged(stage) {
  // The result is computed at once; its parts become visible with the stage that produces them.
  document.querySelectorAll("[data-from], [data-until]").forEach((node) => {
    const early = node.dataset.from !== undefined && stage < Number(node.dataset.from);
    const late = node.dataset.until !== undefined && stage >= Number(node.dataset.until);
    node.hidden = early || late;
  });
}

function groupedReasons(excluded, more) {
  // "M1, M2: not in the chosen memory store; M8: another tenant's record (hard filter)"
  const groups = new Map();
  excluded.forEach((e) => {
    const text = reasonText(e.reason);
    if (!groups.has(text)) groups.set(text, []);
    groups.get(text).push(shortId(e.id));
  });
  const parts = Array.from(groups, ([text, ids]) => ids.join(", ") + ": " + text);
  return parts.join("; ") + (more ? "; …" : "");
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

class ApiError extends Error {
  constructor(message, field, gone) {
    super(message);
    this.field = field || null;
    this.gone = Boolean(gone); // a page of rows named a recall result the server no longer holds
  }
}

function sentence(text) {
  const trimmed = text.trim().replace(/[.]$/, "");
  return trimmed.charAt(0).toUpperCase() + trimmed.slice(1) + ".";
}

function plainError(error) {
  // "Context word budget is empty; it must be a whole number." from {field, value, reason}.
  const label = FIELD_LABELS[error.field] || error.field || "The workbench";
  const reason = String(error.reason || error.message || "was not accepted").replace(/'([^']*)'/g, "$1");
  const value = error.value === null || error.value === undefined ? "" : String(error.value);
  if (value.trim() === "" && /number/.test(reason)) return sentence(label + " is empty; it " + reason);
  const said = /^(must|is|was|needs) /.test(reason) ? label + " " + reason : label + ": " + reason;
  return sentence(value.trim() === "" ? said : said + " (you entered “" + value + "”)");
}

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
    throw new ApiError(plainError(e), e.field, response.status === 409);
  }
  return body;
}

async function recompute(rowsOnly, again) {
  // The selection first (the tray is ready at once), then the explained rows for the table.
  // Every page of rows names the recall result it belongs to, so the table never mixes two.
  const ticket = ++state.request;
  document.body.dataset.busy = "1";
  const params = new URLSearchParams(settings());
  try {
    if (!rowsOnly || !state.selection) {
      const selection = await getJSON("/api/recall?" + params.toString());
      if (ticket !== state.request) return;
      state.selection = selection;
      state.rows = null;
      state.shownStage = -1;
      noticeSeq(selection.seq);
      renderResult();
    }
    params.set("result", state.selection.result);
    params.set("offset", String(state.offset));
    params.set("outcome", $("outcome").value);
    const rows = await getJSON("/api/rows?" + params.toString());
    if (ticket !== state.request) return;
    state.rows = rows;
    state.shownStage = -1;
    state.idle = "";
    markInvalid(null);
    showError(null);
    showChanged(again ? CHANGED : null);
    renderResult();
  } catch (err) {
    if (ticket !== state.request) return;
    if (!(err instanceof ApiError)) throw err;
    if (err.gone && !again) {
      // The store changed since this selection was recalled: recall again, from the first page.
      state.offset = 0;
      recompute(false, true);
      return;
    }
    showChanged(null);
    // A failed recompute leaves no stale answer beside its error.
    state.selection = null;
    state.rows = null;
    state.idle = err.gone ? STILL_CHANGING : "No result: fix the highlighted setting.";
    markInvalid(err.gone ? null : err.field);
    showError(err.gone ? STILL_CHANGING : err.message);
    renderResult();
  } finally {
    if (ticket === state.request) document.body.dataset.busy = "0";
  }
}

const CHANGED =
  "The store changed after the last result was recalled, so recall ran again: the tray and " +
  "the table show the new result, from its first page.";

const STILL_CHANGING =
  "The store keeps changing: each new result was replaced before its table could be read. " +
  "Change any setting to recall again.";

function showChanged(message) {
  const box = $("store-changed");
  box.hidden = !message;
  box.textContent = message || "";
}

function noticeSeq(seq) {
  // A recall that saw newer commits than the page did: read the tenants, log and tiers again.
  const moved = state.seq !== null && seq !== state.seq;
  state.seq = seq;
  if (moved && state.config.mode === "live") refreshStore();
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

function markInvalid(field) {
  document.querySelectorAll("[aria-invalid]").forEach((node) => node.removeAttribute("aria-invalid"));
  const control = field ? document.querySelector("#controls [name='" + field + "']") : null;
  if (control) control.setAttribute("aria-invalid", "true");
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

// ---------- rendering: the diagram ----------

function card(row, lane, look) {
  // look: "current" (this stage's lane), "passed" (went on), "excluded" (stopped here), "selected".
  const item = el("li", "card " + look);
  item.dataset.id = row.id;
  item.dataset.kind = row.kind;
  // The store shows as the stripe colour (see the legend); its words are for screen readers.
  const head = el("span", "card-head");
  head.append(idNode("strong", "card-id", row.id), el("span", "card-words", row.words + " words"));
  item.append(head);
  item.append(el("span", "card-text", row.content));
  const meta = el("span", "card-meta");
  const facts = [];
  if (state.config.mode === "bank") facts.push(row.tenant_label);
  const age = humanAge(row.age_hours);
  if (age) facts.push(age + " old");
  if (state.config.mode === "live") facts.push(row.tier);
  if (row.always) facts.push("always loads");
  meta.append(el("span", "sr-only", kindLabel(row.kind, "legend") + ", "), facts.join(" · "));
  item.append(meta);
  if (lane >= 2 && row.score !== null) item.append(el("span", "card-score", "score " + fmt(row.score)));
  if (lane >= 2 && row.fusion) item.append(el("span", "card-score", row.fusion));
  item.title = kindLabel(row.kind, "legend") + (look === "passed" ? ": went on to the next lane" : "");
  return item;
}

function laneOrder(rows, lane) {
  if (lane === FINAL) {
    const position = new Map(state.selection.selected.map((id, i) => [id, i]));
    return rows.slice().sort((a, b) => position.get(a.id) - position.get(b.id));
  }
  if (lane === 2) {
    // Ranked by the blended score recall() computed; the page never scores anything itself.
    return rows.slice().sort((a, b) => (b.score ?? -Infinity) - (a.score ?? -Infinity) || byId(a, b));
  }
  return rows.slice().sort(byId);
}

function renderLane(lane, index, stage) {
  // A lane holds every card that reached it: the ones that went on fade, the ones that
  // stopped here sit under their reason, so the count always equals the cards in the lane.
  const body = lane.querySelector(".lane-body");
  const count = lane.querySelector(".count");
  body.replaceChildren();
  count.textContent = "";
  const rows = state.rows;
  if (!rows || !state.selection || index > stage) return;
  const here = laneOrder(rows.rows.filter((row) => reached(row) >= index), index);
  const stoppedHere = (row) => row.outcome === "excluded" && reached(row) === index && stage > index;
  const cap = state.config.mode === "live" ? LIVE_CARDS_PER_LANE : Infinity;
  let drawn = 0;
  const take = (list) => {
    const shown = list.slice(0, Math.max(0, cap - drawn));
    drawn += shown.length;
    return shown;
  };
  const moving = take(here.filter((row) => !stoppedHere(row)));
  if (moving.length) {
    const look = (row) => {
      if (index === FINAL) return "selected";
      return reached(row) > index && stage > index ? "passed" : "current";
    };
    const list = el("ol", "cards");
    list.append(...moving.map((row) => card(row, index, look(row))));
    body.append(list);
  }
  const groups = new Map();
  here.filter(stoppedHere).forEach((row) => {
    const text = reasonText(row.reason);
    if (!groups.has(text)) groups.set(text, []);
    groups.get(text).push(row);
  });
  groups.forEach((members, text) => {
    const shown = take(members);
    if (!shown.length) return;
    const group = el("section", "group");
    group.append(el("p", "group-reason", text));
    const list = el("ol", "cards");
    list.append(...shown.map((row) => card(row, index, "excluded")));
    group.append(list);
    body.append(group);
  });
  const total = rows.counts.reached[index];
  count.textContent = "(" + total + ")";
  if (total > drawn) {
    body.append(el("p", "more", "… and " + (total - drawn) + " more: see the table below"));
  }
  if (index === FINAL && total === 0) body.append(el("p", "note", "Empty: nothing passed every stage."));
}

function renderLegend(kinds) {
  const legend = $("legend");
  legend.querySelectorAll(".legend-item").forEach((node) => node.remove());
  kinds.forEach((kind) => {
    const item = el("span", "legend-item");
    const swatch = el("span", "swatch");
    swatch.dataset.kind = kind;
    swatch.setAttribute("aria-hidden", "true");
    item.append(swatch, el("span", null, kindLabel(kind, "legend")));
    legend.append(item);
  });
}

function lanes() {
  return Array.from(document.querySelectorAll("#diagram .lane"));
}

function showLane(index) {
  // On a phone one lane fills the diagram: scroll sideways to the asked one.
  const scroller = $("diagram");
  if (scroller.scrollWidth <= scroller.clientWidth + 1) return;
  const lane = lanes()[index];
  scroller.scrollTo({ left: lane.offsetLeft - lanes()[0].offsetLeft, behavior: "instant" });
  markVisibleLane();
}

function markVisibleLane() {
  const scroller = $("diagram");
  const origin = lanes()[0].offsetLeft;
  let nearest = 0;
  lanes().forEach((lane, i) => {
    const gap = Math.abs(lane.offsetLeft - origin - scroller.scrollLeft);
    const best = Math.abs(lanes()[nearest].offsetLeft - origin - scroller.scrollLeft);
    if (gap < best) nearest = i;
  });
  document.querySelectorAll("#lane-tabs button").forEach((button) => {
    if (Number(button.dataset.lane) === nearest) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  });
}

// ---------- rendering: one stage ----------

function renderStage(stage) {
  document.querySelectorAll("#stages li").forEach((li) => {
    const index = Number(li.dataset.stage);
    li.classList.toggle("done", index < stage);
    if (index === stage) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
  });
  lanes().forEach((lane, index) => renderLane(lane, index, stage));
  renderTray(stage);
  $("status").textContent = statusText(stage);
  $("table-stage-note").textContent =
    stage >= FINAL
      ? "Final stage: every outcome and reason is shown."
      : "The table follows the stages: filter reasons appear at stage 2, scores at stage 3 and what was selected at stage 4. Next stage goes on.";
  revealStaged(stage);
  showLane(stage);
}

function statusText(stage) {
  // What the stage on screen found, in the user's words; the final count waits for stage 4.
  const selection = state.selection;
  const rows = state.rows;
  if (!selection) return state.idle;
  if (!rows) return "Working out why each record is in or out…";
  const noun = state.config.mode === "live" ? "memories" : "records";
  const [stored, passed, ranked] = rows.counts.reached;
  if (stage === 0) {
    const where = state.config.mode === "live" ? "this tenant has " + stored + " " + noun : "the bank holds " + stored + " " + noun;
    return "Stage 1 of 4, stored records: " + where + ". The scope filters come next.";
  }
  if (stage === 1) {
    return "Stage 2 of 4, scope filters: " + passed + " of " + stored + " " + noun + " passed; " + (stored - passed) + " filtered out.";
  }
  if (stage === 2) {
    const dropped = passed - ranked;
    const why = dropped === (rows.counts.reasons.no_lexical_match || 0) ? " share no word with the question." : " were left out at ranking.";
    return "Stage 3 of 4, ranking: " + ranked + " ranked by blended score; " + dropped + why;
  }
  let text = "Final context: " + rows.counts.selected + " selected, " + usedText(selection) + "; " +
    rows.counts.excluded + " left out.";
  if (selection.context.note) text += " " + selection.context.note;
  return text;
}

function usedText(selection) {
  // "40 of 200 words used, plus 11 words of 1 correction that loads outside the budget":
  // always-scope memories load first and are never counted against a cap.
  const context = selection.context;
  const unit = context.unit;
  const used = Object.values(context.used).reduce((a, b) => a + b, 0);
  const always = selection.selected_memories.filter((m) => m.always);
  const of = context.budget === null ? " " : " of " + context.budget + " ";
  if (!always.length) return used + of + unit + " used";
  const what = always.length === 1 ? "1 correction that loads" : always.length + " corrections that load";
  if (unit !== "words") return used + of + unit + " used, counting " + what + " outside the budget";
  // Under a word budget a memory costs the words the page shows.
  const outside = always.reduce((sum, m) => sum + m.words, 0);
  return used - outside + of + unit + " used, plus " + outside + " " + unit + " of " + what + " outside the budget";
}

function renderTray(stage) {
  const selection = state.selection;
  const tray = $("tray");
  const final = stage >= FINAL && selection !== null;
  tray.replaceChildren();
  if (final) {
    const explained = new Map((state.rows ? state.rows.rows : []).map((row) => [row.id, row]));
    const cap = state.config.mode === "live" ? LIVE_TRAY_CARDS : Infinity;
    selection.selected_memories.slice(0, cap).forEach((memory) => {
      const item = el("li", "tray-item");
      item.dataset.id = memory.id;
      item.append(idNode("strong", "card-id", memory.id));
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
    const more = selection.selected_memories.length - cap;
    if (more > 0) {
      tray.append(el("li", "more", "… and " + more + " more selected: the table lists them (Show records: Selected)"));
    }
  }
  let note = "The tray is populated at the final stage. No answer is generated: compare the selected source facts yourself.";
  if (final) note = "Final stage. No answer is generated: compare the selected source facts yourself.";
  if (!selection && state.idle) note = state.idle;
  $("tray-note").textContent = note;
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

// ---------- rendering: the table ----------

function rowMeta(row) {
  const parts = [kindLabel(row.kind, "card"), row.tenant_label];
  if (row.session) parts.push("session " + row.session);
  if (row.age_hours !== null) parts.push(humanAge(row.age_hours) + " old");
  parts.push(row.words + " words");
  if (row.key) parts.push("key " + row.key);
  if (state.config.mode === "live") parts.push("scope " + row.scope, "tier " + row.tier);
  return parts.join(" · ");
}

function numberCell(row, value, why) {
  // A score appears at ranking (stage 3); a record filtered out first says so instead.
  const cell = el("td", "num");
  const filtered = reached(row) === 0 && row.outcome === "excluded";
  const at = filtered ? 1 : 2;
  cell.append(staged(el("span", "pending", "at stage 3"), null, at));
  if (filtered) cell.append(staged(el("span", "why", why), at, null));
  else cell.append(staged(el("span", null, value === null ? "not ranked" : fmt(value)), at, null));
  return cell;
}

function outcomeCell(row) {
  const cell = el("td", "outcome");
  const decided = decidedAt(row);
  for (let stage = 0; stage < decided; stage += 1) {
    cell.append(staged(el("span", "pending", PROGRESS[stage]), stage, stage + 1));
  }
  const final = staged(el("span", "decided"), decided, null);
  if (row.outcome === "selected") {
    final.append(el("span", "pill selected", "Selected"));
  } else {
    final.append(el("span", "pill excluded", "Excluded"));
    final.append(el("span", "reason", " " + reasonText(row.reason) + " "));
    final.append(el("code", "reason-code", row.reason));
  }
  if (row.fusion) final.append(el("span", "fusion", " " + row.fusion));
  cell.append(final);
  return cell;
}

function renderTable() {
  const result = state.rows;
  const body = document.querySelector("#records tbody");
  if (!result) {
    body.replaceChildren();
    updateTableHint();
    return;
  }
  body.replaceChildren(
    ...result.rows.map((row) => {
      const tr = el("tr");
      tr.dataset.id = row.id;
      tr.dataset.outcome = row.outcome;
      const id = idNode("th", "id", row.id);
      id.scope = "row";
      tr.append(id);
      const text = el("td", "text");
      text.append(el("span", "content", row.content));
      text.append(el("span", "meta", rowMeta(row)));
      tr.append(text);
      tr.append(numberCell(row, row.cosine, "not ranked: filtered out first"));
      tr.append(numberCell(row, row.score, "not ranked"));
      tr.append(outcomeCell(row));
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
  updateTableHint();
}

function updateTableHint() {
  // Say that the table scrolls sideways while columns are still hidden to the right.
  // Scrolled to the end it only fades, so the table does not jump under the reader's finger.
  const scroller = $("table-scroll");
  const overflow = scroller.scrollWidth - scroller.clientWidth;
  $("table-hint").hidden = overflow <= 1;
  $("table-hint").classList.toggle("spent", overflow - scroller.scrollLeft <= 4);
}

// ---------- rendering: baseline and current ----------

function summary(s) {
  const selection = state.selection;
  const rows = state.rows;
  const excluded = rows
    ? groupedReasons(rows.excluded_summary, rows.counts.excluded > rows.excluded_summary.length)
    : "";
  return {
    question: questionText(s),
    settings: describeSettings(s),
    selected: selection.selected.map(shortId),
    coverage: selection.coverage ? coverageText(selection) : "",
    excluded: excluded,
    prediction: state.config.mode === "bank" ? $("prediction").value : "",
  };
}

function renderSummary(container, snap, empty) {
  // Question and settings at once; what was selected and left out from the final stage on.
  const body = container.querySelector(".body");
  body.replaceChildren();
  if (!snap) {
    body.append(el("p", "note", empty));
    return;
  }
  const list = el("dl");
  const add = (term, value, from) => {
    list.append(staged(el("dt", null, term), from, null));
    list.append(staged(el("dd", null, value), from, null));
  };
  add("Question", snap.question, null);
  add("Settings", snap.settings, null);
  add("Selected", snap.selected.length ? snap.selected.join(", ") : "nothing (empty context)", FINAL);
  if (snap.coverage) add("Coverage", snap.coverage.replace("Supporting-fact coverage: ", ""), FINAL);
  add("Excluded", snap.excluded || "none", FINAL);
  if (snap.prediction) add("Prediction", snap.prediction, null);
  body.append(list);
  body.append(staged(el("p", "note", "Selected records, coverage and exclusions appear at stage 4."), null, FINAL));
}

function renderResult() {
  rememberIds();
  renderTable();
  const current = state.selection ? summary(settings()) : null;
  renderSummary($("current-panel"), current, state.idle || "Working out the result…");
  tick();
  renderStage(stageAt(elapsed()));
}

function renderBaseline() {
  renderSummary($("baseline-panel"), state.baseline, "No baseline captured.");
  revealStaged(stageAt(elapsed()));
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

function fillTenants(tenants) {
  // The Active tenant choices, keeping the one chosen.
  const chosen = $("tenant").value;
  $("tenant").replaceChildren(
    ...tenants.map((t) => {
      const option = el("option", null, t.label);
      option.value = t.id;
      return option;
    }),
  );
  if (tenants.some((t) => t.id === chosen)) $("tenant").value = chosen;
}

async function refreshStore() {
  // The store moved on: a new tenant appears in the list, the log and tiers are read again.
  try {
    const config = await getJSON("/api/config");
    state.config.tenants = config.tenants;
    fillTenants(config.tenants);
  } catch (err) {
    showError(err.message);
  }
  showLiveViews();
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
  state.seq = config.seq;
  fillTenants(config.tenants);
  if (config.mode === "bank") {
    config.questions.forEach((q) => {
      const option = el("option", null, q.label);
      option.value = q.id;
      $("question").append(option);
    });
  } else {
    document.body.classList.add("live");
    $("mode-badge").textContent = "live store";
    $("records-caption").textContent =
      "Every memory of the active tenant, page by page, with its cosine, blended score and outcome. " +
      "Rows come in recall()'s order, selected memories first, so the order gives the answer away before stage 4.";
    document.title = "Recall over this store · memcommit workbench";
    document.querySelector("#diagram .lane-name").textContent = "Store · stored";
    document.querySelector("#lane-tabs button[data-lane='0']").textContent = "1 Stored";
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
  renderLegend(config.mode === "bank" ? BANK_KINDS : config.kinds);
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
  document.querySelectorAll("#lane-tabs button").forEach((button) =>
    button.addEventListener("click", () => showLane(Number(button.dataset.lane))),
  );
  $("diagram").addEventListener("scroll", markVisibleLane, { passive: true });
  $("table-scroll").addEventListener("scroll", updateTableHint, { passive: true });
  window.addEventListener("resize", updateTableHint);
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
    state.idle = "Type a question to rank this store's memories.";
    renderResult();
  } else {
    await recompute(false);
  }
  document.body.dataset.started = "1";
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((err) => showError("The workbench could not start: " + err.message));
});
