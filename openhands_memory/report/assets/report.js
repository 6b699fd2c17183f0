// The replay report's page: reads the embedded JSON (openhands_memory/report/packing.py says its shape),
// draws the charts with uPlot, and shows the messages of the chosen step. Text from the log is only ever
// set as textContent: nothing in a log becomes markup or script.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const runs = data.runs;
  const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf"];
  const DASHES = [[], [8, 4], [2, 3]];
  const state = { run: 0, pricing: 0, step: 1 };
  const steps = Math.max(0, ...runs.map((r) => r.tokens.length));
  const xs = Array.from({ length: steps }, (_, i) => i + 1);
  const charts = [];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }
  const num = (v) => (v === null || v === undefined ? "–" : Number(v).toLocaleString("en-US"));
  const usd = (v) => (v === null || v === undefined ? "–" : "$" + Number(v).toFixed(v >= 1 ? 2 : 4));
  const styleOf = (i) => ({ stroke: COLOURS[i % COLOURS.length], dash: DASHES[Math.floor(i / COLOURS.length) % DASHES.length] });
  const padded = (values) => xs.map((_, i) => (i < values.length ? values[i] : null));

  function width(node) {
    return Math.max(320, node.clientWidth || document.body.clientWidth - 40);
  }

  // -- prompts: [keep, ref...] rows back into each step's message references -----------------------
  for (const run of runs) {
    let previous = [];
    run.stepRefs = run.prompts.map((row) => (previous = previous.slice(0, row[0]).concat(row.slice(1))));
  }

  // -- header and totals -----------------------------------------------------------------------------
  document.getElementById("source").textContent =
    `${data.source}: ${steps} agent steps, tokens counted ` +
    (data.tokenizer === "approximate" ? "approximately (four characters a token), " : `with ${data.tokenizer}'s tokenizer, `) +
    `context limit ${num(data.context_limit)}, priced as ${data.pricings.join(", ") || "(no pricing)"}.`;
  const totals = document.getElementById("totals");
  const head = ["pipeline", "steps", "peak tokens", "total prompt tokens", "condensations"];
  data.pricings.forEach((p) => head.push(`${p}: total $`, `${p}: cache breaks`, `${p}: cold starts`));
  totals.append(el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { text: h })))));
  const body = el("tbody");
  runs.forEach((run, i) => {
    const swatch = el("span", { class: "swatch" });
    swatch.style.borderTop = `3px ${styleOf(i).dash.length ? (styleOf(i).dash[0] > 4 ? "dashed" : "dotted") : "solid"} ${styleOf(i).stroke}`;
    const name = el("td", {}, swatch, run.name);
    name.title = run.description;
    const cells = [name, el("td", { text: num(run.totals.steps) }), el("td", { text: num(run.totals.peak_tokens) }),
      el("td", { text: num(run.totals.total_prompt_tokens) }), el("td", { text: num(run.totals.condensations) })];
    run.costs.forEach((c) => cells.push(el("td", { text: usd(c.total_cost) }),
      el("td", { text: `${num(c.cache_breaks)} (${usd(c.cache_break_cost)})` }),
      el("td", { text: `${num(c.cold_starts)} (${usd(c.cold_start_cost)})` })));
    const row = el("tr", { "data-run": String(i) }, ...cells);
    row.addEventListener("click", () => chooseRun(i));
    body.append(row);
  });
  totals.append(body);

  // -- choosers ------------------------------------------------------------------------------------------
  const runSelect = document.getElementById("run");
  runs.forEach((run, i) => runSelect.append(el("option", { value: String(i), text: run.name })));
  runSelect.addEventListener("change", () => chooseRun(Number(runSelect.value)));
  const pricingSelect = document.getElementById("pricing");
  data.pricings.forEach((p, i) => pricingSelect.append(el("option", { value: String(i), text: p })));
  pricingSelect.addEventListener("change", () => {
    state.pricing = Number(pricingSelect.value);
    drawFocused();
    showStep(state.step);
  });

  // -- charts ----------------------------------------------------------------------------------------------
  function clickToStep(u) {
    u.over.addEventListener("click", () => {
      if (u.cursor.idx !== null && u.cursor.idx !== undefined) showStep(u.cursor.idx + 1);
    });
  }
  function stepLine(u) {
    // the chosen step, as a vertical rule
    const x = Math.round(u.valToPos(state.step, "x", true));
    const ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = "#444";
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.restore();
  }
  function chartOptions(title, node, series, yLabel, height) {
    return {
      title, width: width(node), height, series: [{ label: "step" }, ...series],
      cursor: { sync: { key: "steps" }, drag: { x: true, y: false } },
      axes: [{ label: "agent step" }, { label: yLabel, size: 70 }],
      scales: { x: { time: false } },
      hooks: { ready: [clickToStep], draw: [stepLine] },
      legend: { live: true },
    };
  }
  function markedAt(stepsToMark) {
    // points only where a step is marked (a condensation on a pipeline's line)
    return () => stepsToMark.map((s) => s - 1);
  }

  const tokensNode = document.getElementById("chart-tokens");
  const tokenSeries = runs.map((run, i) => ({
    label: run.name, ...styleOf(i), width: 1.5,
    points: { show: true, size: 7, filter: markedAt(run.condensations.map((c) => c.step)) },
  }));
  tokenSeries.push({ label: `context limit (${num(data.context_limit)})`, stroke: "#000", width: 1, dash: [10, 5], points: { show: false } });
  const tokenData = [xs, ...runs.map((r) => padded(r.tokens)), xs.map(() => data.context_limit)];
  charts.push(new uPlot(chartOptions("Prompt tokens per step, every pipeline (dots: condensations)", tokensNode,
    tokenSeries, "prompt tokens", 360), tokenData, tokensNode));

  const dollarsNode = document.getElementById("chart-dollars");
  let dollarsChart = null;
  const cacheNode = document.getElementById("chart-cache");
  let cacheChart = null;

  function cumulative(values) {
    let sum = 0;
    return values.map((v) => (sum += v));
  }
  function drawFocused() {
    if (!data.pricings.length) return;
    const pricing = state.pricing;
    const dollarSeries = runs.map((run, i) => ({ label: run.name, ...styleOf(i), width: 1.5, points: { show: false },
      value: (u, v) => (v === null ? "–" : usd(v)) }));
    const dollarData = [xs, ...runs.map((r) => padded(cumulative(r.pricing[pricing].dollars)))];
    if (dollarsChart) dollarsChart.destroy();
    dollarsChart = new uPlot(chartOptions(`Dollars so far, every pipeline, priced as ${data.pricings[pricing]}`,
      dollarsNode, dollarSeries, "USD", 300), dollarData, dollarsNode);

    const run = runs[state.run];
    const p = run.pricing[pricing];
    const read = p.read, write = p.write, uncached = p.uncached;
    const stacked = [read.map((v, i) => v + write[i] + uncached[i]), read.map((v, i) => v + write[i]), read];
    const raw = [uncached, write, read];
    const marks = (kind) => padded(p.kind.map((k, i) => (k === kind ? stacked[0][i] : null)));
    const condensed = new Set(run.condensations.map((c) => c.step));
    const series = [
      { label: "uncached", stroke: "#d62728", fill: "#f4a3a3", width: 1 },
      { label: "cache write", stroke: "#ff7f0e", fill: "#ffd19a", width: 1 },
      { label: "cache read", stroke: "#2ca02c", fill: "#a9dfa9", width: 1 },
    ].map((s, k) => ({ ...s, points: { show: false }, value: (u, v, si, idx) => (idx === null || idx === undefined || raw[k][idx] === undefined ? "–" : num(raw[k][idx])) }));
    // condensations as filled dots; breaks and cold starts as rings drawn over them (a condensation often breaks the cache)
    const markSeries = (label, colour, fill, size) => ({ label, stroke: colour, fill: colour, paths: () => null,
      points: { show: true, size, width: 2, stroke: colour, fill }, width: 0 });
    series.push(markSeries("condensation", "#9467bd", "#9467bd", 8), markSeries("cache break", "#000", "rgba(0,0,0,0)", 14),
      markSeries("cold start", "#1f77b4", "rgba(0,0,0,0)", 14));
    const cacheData = [xs, ...stacked.map(padded), padded(stacked[0].map((v, i) => (condensed.has(i + 1) ? v : null))),
      marks("break"), marks("expired")];
    if (cacheChart) cacheChart.destroy();
    cacheChart = new uPlot(chartOptions(`${run.name}: prompt tokens by how ${data.pricings[pricing]} bills them`,
      cacheNode, series, "prompt tokens", 300), cacheData, cacheNode);
    drawMarks();
  }

  // -- condensations, cache breaks, cold starts of the chosen pipeline ---------------------------------
  function drawMarks() {
    const run = runs[state.run];
    const table = document.getElementById("marks");
    table.replaceChildren();
    table.append(el("thead", {}, el("tr", {}, ...["step", "what", "forgot", "summary", "cost"].map((h) => el("th", { text: h })))));
    const body = el("tbody");
    const rows = [];
    for (const c of run.condensations) {
      const cost = data.pricings.map((p, k) => {
        const pricing = run.pricing[k];
        const i = c.step - 1;
        const penalty = pricing && pricing.kind[i] === "break" ? pricing.penalty[i] : 0;
        return `${p}: summarizer ${usd(c.summarizer_cost[k])}, cache rewritten ${usd(penalty)}`;
      }).join("; ");
      const forgot = `${c.forgotten.length} events` + (c.forgotten.length ? ` (ids ${c.forgotten[0]}–${c.forgotten[c.forgotten.length - 1]})` : "") +
        `; view ${c.events_before} → ${c.events_after} events` +
        (c.tokens_before !== null && c.tokens_before !== undefined ? `, ${num(c.tokens_before)} → ${num(c.tokens_after)} tokens` : "");
      const summary = c.summary === null ? el("span", { class: "dim", text: "(no summary)" })
        : el("details", {}, el("summary", { text: c.summary.slice(0, 80) + (c.summary.length > 80 ? "…" : "") }), el("pre", { text: c.summary }));
      rows.push([c.step, el("tr", { class: "mark condensation", "data-step": String(c.step) }, el("td", { text: String(c.step) }),
        el("td", { text: `condensation #${c.id} (${c.condenser || "?"}${c.reason ? ", " + c.reason : ""})` }),
        el("td", { text: forgot }), el("td", {}, summary), el("td", { text: cost }))]);
    }
    data.pricings.forEach((p, k) => {
      const pricing = run.pricing[k];
      pricing.kind.forEach((kind, i) => {
        if (kind !== "break" && kind !== "expired") return;
        const what = kind === "break" ? "cache break" : "cold start (cache expired)";
        rows.push([i + 1, el("tr", { class: `mark ${kind}`, "data-step": String(i + 1) }, el("td", { text: String(i + 1) }),
          el("td", { text: `${what}, ${p}` }), el("td", { text: `${num(pricing.rewritten[i])} tokens rewritten` }),
          el("td", { class: "dim", text: "" }), el("td", { text: `${usd(pricing.penalty[i])} over reading the cache` }))]);
      });
    });
    rows.sort((a, b) => a[0] - b[0]);
    for (const [step, row] of rows) {
      row.addEventListener("click", () => showStep(step));
      body.append(row);
    }
    if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "5", class: "dim", text: "none" })));
    table.append(body);
  }

  // -- the chosen step's messages ---------------------------------------------------------------------------
  function contentText(content) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    return content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
  }
  const memoryTools = new Set(data.memory_tools);
  const isRecall = (message) => (message.role === "tool" && memoryTools.has(message.name)) ||
    (message.tool_calls || []).some((call) => memoryTools.has(call.function.name));
  function messageNode(message, index) {
    const recall = isRecall(message);
    const node = el("div", { class: `msg role-${message.role}${recall ? " recall" : ""}`, "data-role": message.role, "data-index": String(index) });
    let label = `#${index} ${message.role}`;
    if (message.name) label += ` (${message.name})`;
    if (recall) label += message.role === "tool" ? " · recall answer" : " · asks the memory tools";
    if (message.tool_call_id) label += ` answers ${message.tool_call_id}`;
    node.append(el("div", { class: "msg-head", text: label }));
    node.append(el("pre", { class: "msg-content", text: contentText(message.content) }));
    for (const call of message.tool_calls || []) {
      node.append(el("pre", { class: "tool-call", text: `→ ${call.function.name}(${call.function.arguments})  [${call.id}]` }));
    }
    return node;
  }
  function showStep(step) {
    const run = runs[state.run];
    const last = run.tokens.length;
    if (!last) {
      document.getElementById("step-count").textContent = "0";
      document.getElementById("step-facts").replaceChildren(el("p", { text: `${run.name}: this log has no agent step.` }));
      return;
    }
    step = Math.min(Math.max(1, step), last);
    state.step = step;
    const i = step - 1;
    document.getElementById("step-input").value = String(step);
    document.getElementById("step-input").max = String(last);
    document.getElementById("step-count").textContent = String(last);
    const facts = [`${run.name}: ${num(run.tokens[i])} prompt tokens, ${run.stepRefs[i].length} messages, ` +
      `${run.view_events[i]} events in view; the agent's next action is event ${run.event_ids[i] ?? "–"} of the log.`];
    data.pricings.forEach((p, k) => {
      const c = run.pricing[k];
      facts.push(`${p}: ${num(c.read[i])} read from the cache, ${num(c.write[i])} written, ${num(c.uncached[i])} uncached; ` +
        `${usd(c.dollars[i])} (${c.kind[i]}${c.penalty[i] ? ", " + usd(c.penalty[i]) + " over reading the cache" : ""}).`);
    });
    const recalls = run.stepRefs[i].filter((ref) => data.messages[ref].role === "tool" && isRecall(data.messages[ref])).length;
    if (recalls) facts.push(`${recalls} recall answer(s) of the memory tools (${data.memory_tools.join(", ")}) in this prompt, marked below.`);
    const made = run.condensations.filter((c) => c.step === step);
    for (const c of made) facts.push(`Condensation #${c.id} applied here: forgot ${c.forgotten.length} events.`);
    document.getElementById("step-facts").replaceChildren(...facts.map((f) => el("p", { text: f })));
    const messages = document.getElementById("messages");
    messages.replaceChildren(el("h3", { text: `Sent to the model at step ${step}` }),
      ...run.stepRefs[i].map((ref, index) => messageNode(data.messages[ref], index)));
    const before = run.replayed_ids[i];
    const forgotten = run.history.filter((row) => row[3] !== null && row[3] <= step && row[0] < before);
    const column = document.getElementById("forgotten");
    column.replaceChildren(el("h3", { text: `Forgotten by then: ${forgotten.length} events` }),
      ...forgotten.map((row) => el("div", { class: "forgotten-event", "data-id": String(row[0]) },
        el("span", { class: "event-head", text: `${row[0]} ${row[1]}` }), el("pre", { text: data.texts[row[2]] }))));
    for (const chart of [...charts, dollarsChart, cacheChart]) if (chart) chart.redraw(false, false);
    document.body.dataset.step = String(step);
  }
  function chooseRun(index) {
    state.run = index;
    runSelect.value = String(index);
    document.querySelectorAll("#totals tbody tr").forEach((row) => row.classList.toggle("chosen", row.dataset.run === String(index)));
    drawFocused();
    showStep(state.step);
  }

  const stepInput = document.getElementById("step-input");
  stepInput.addEventListener("change", () => showStep(Number(stepInput.value)));
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
    const moves = { ArrowRight: 1, ArrowLeft: -1, PageDown: 10, PageUp: -10 };
    if (event.key in moves) showStep(state.step + moves[event.key]);
    else if (event.key === "Home") showStep(1);
    else if (event.key === "End") showStep(steps);
    else return;
    event.preventDefault();
  });
  window.addEventListener("resize", () => {
    for (const [chart, node] of [[charts[0], tokensNode], [dollarsChart, dollarsNode], [cacheChart, cacheNode]]) {
      if (chart) chart.setSize({ width: width(node), height: chart.height });
    }
  });

  chooseRun(0);
  document.body.dataset.ready = "1";
})();
