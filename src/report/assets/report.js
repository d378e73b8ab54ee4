// Draws report.html's charts with uPlot from #parity-data. Every chart
// container gets data-rendered="true" once uPlot has drawn it.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("parity-data").textContent);
  var COLORS = ["#2f5fb3", "#d9822b", "#1a7f37", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#b7950b"];

  // JSON numbers, or "inf"/"-inf"/"nan" strings, to JS numbers.
  function num(v) {
    if (typeof v === "number") return v;
    if (v === "inf") return Infinity;
    if (v === "-inf") return -Infinity;
    return NaN;
  }
  function fmt(v) {
    if (v == null) return "";
    if (!isFinite(v)) return String(v);
    if (v === 0) return "0";
    var a = Math.abs(v);
    return a >= 1e4 || a < 1e-3 ? v.toExponential(2) : String(+v.toPrecision(4));
  }
  function widthOf(el) { return Math.max(300, (el.clientWidth || 800) - 18); }
  function markRendered(el) { return function () { el.setAttribute("data-rendered", "true"); }; }

  function plot(el, opts, rows) {
    opts.width = widthOf(el);
    opts.height = opts.height || 260;
    opts.hooks = { draw: [markRendered(el)] };
    return new uPlot(opts, rows, el);
  }

  var FLOOR = 1e-6, CEIL = 1e6;
  function drawLayers(el) {
    // Unchecked tensors (a fusion removed them: nothing to compare) are not
    // exact matches: they leave a gap in the line and get a grey mark along
    // the top of the chart instead of sitting at the floor.
    // data-source: which curve (the fused-vs-unfused layer_curve, or the
    // PyTorch layers' torch_curve); the same drawing for both.
    var pts = data[el.getAttribute("data-source") || "layer_curve"] || [],
        x = [], ratio = [], fails = [], one = [], unchecked = [], top = 10;
    for (var i = 0; i < pts.length; i++) {
      if (pts[i].status === "unchecked") continue;
      var q = num(pts[i].error_ratio);
      if (isNaN(q)) q = CEIL;
      top = Math.max(top, Math.min(CEIL, q));
    }
    top = Math.pow(10, Math.ceil(Math.log10(top)));
    for (var i = 0; i < pts.length; i++) {
      var r = num(pts[i].error_ratio);
      if (isNaN(r)) r = CEIL;
      r = Math.min(CEIL, Math.max(FLOOR, r));
      var skip = pts[i].status === "unchecked";
      x.push(pts[i].index);
      ratio.push(skip ? null : r);
      fails.push(pts[i].status === "fail" ? r : null);
      one.push(1);
      unchecked.push(skip ? top : null);
    }
    plot(el, {
      height: 300,
      scales: { x: { time: false },
                y: { distr: 3, log: 10, range: function (u, lo, hi) {
                  return [Math.pow(10, Math.floor(Math.log10(Math.min(lo, 0.1)))),
                          Math.pow(10, Math.ceil(Math.log10(Math.max(hi, 10))))]; } } },
      series: [
        { label: "topological index", value: function (u, v, s, idx) {
            return idx == null ? "" : v + " " + (pts[idx] ? pts[idx].tensor + " (" + pts[idx].op_type + ")" : ""); } },
        { label: "error / tolerance", stroke: "#2f5fb3", width: 1.5, points: { show: pts.length <= 200, size: 4 },
          value: function (u, v) { return fmt(v); } },
        { label: "failing", stroke: "#c62828", width: 0, paths: function () { return null; },
          points: { show: true, size: 7, fill: "#c62828", stroke: "#c62828" },
          value: function (u, v) { return v == null ? "" : fmt(v); } },
        { label: "tolerance (1)", stroke: "#c62828", width: 1, dash: [6, 4], points: { show: false } },
        { label: "unchecked (fused away)", stroke: "#9e9e9e", width: 0, paths: function () { return null; },
          points: { show: true, size: 5, fill: "#ffffff", stroke: "#9e9e9e" },
          value: function (u, v) { return v == null ? "" : "unchecked"; } }
      ],
      axes: [{ label: "observed tensor, topological order" },
             { label: "max error / tolerance", size: 56,
               splits: function (u) {  // whole decades only, at most 8 labels
                 var lo = Math.round(Math.log10(u.scales.y.min)), hi = Math.round(Math.log10(u.scales.y.max));
                 var step = Math.max(1, Math.ceil((hi - lo) / 8)), out = [];
                 for (var k = Math.ceil(lo / step) * step; k <= hi; k += step) out.push(Math.pow(10, k));  // keeps 1
                 return out;
               },
               values: function (u, splits) { return splits.map(decade); } }]
    }, [x, ratio, fails, one, unchecked]);
  }

  // 1e-12, 0.001, 1, 10: powers of ten as short as they come.
  function decade(v) {
    if (v == null || !(v > 0)) return "";  // uPlot blanks crowded log ticks with null
    var k = Math.round(Math.log10(v));
    return k >= -3 && k <= 3 ? String(+Math.pow(10, k).toPrecision(1)) : "1e" + k;
  }
  function histLabel(i) {
    var e = data.histogram_edges;
    if (i === 0) return "0";
    if (i >= e.length) return ">" + decade(e[e.length - 1]);
    return "\u2264" + decade(e[i]);
  }
  function drawHistogram(el) {
    var h = data.histograms[+el.getAttribute("data-index")];
    var x = [], y = [];
    for (var i = 0; i < h.counts.length; i++) { x.push(i); y.push(h.counts[i]); }
    var top = 1, ticks = [0];
    while (top < Math.max.apply(null, y)) top *= 10;
    for (var t = 1; t <= top; t *= 10) ticks.push(t);
    if (ticks.length > 6) ticks = ticks.filter(function (t, k) { return k % 2 === 0; });
    plot(el, {
      height: 200,
      legend: { show: false },
      cursor: { show: true, points: { show: false } },
      // asinh: linear near zero, logarithmic above, so a bin of 3 shows beside one of 10^6.
      scales: { x: { time: false, range: [-0.6, h.counts.length - 0.4] },
                y: { distr: 4, asinh: 1, range: function (u, lo, hi) { return [0, top]; } } },
      series: [{}, { label: "elements", stroke: h.status === "fail" ? "#c62828" : "#2f5fb3",
                     fill: h.status === "fail" ? "rgba(198,40,40,0.35)" : "rgba(47,95,179,0.35)",
                     paths: uPlot.paths.bars({ size: [0.8, 60] }), points: { show: false } }],
      axes: [{ splits: function () { return x; }, values: function (u, s) { return s.map(histLabel); },
               rotate: -60, size: 46, gap: 2, font: "10px system-ui, sans-serif", label: "|test \u2212 ref|", labelSize: 14 },
             // Decades as "1e4", never "1.00e+4": the labels fit the axis at any count.
             { size: 44, splits: function () { return ticks; },
               values: function (u, s) { return s.map(function (v) { return v === 0 ? "0" : decade(v); }); } }]
    }, [x, y]);
  }

  function quantile(sorted, q) {
    if (!sorted.length) return null;
    var pos = (sorted.length - 1) * q, lo = Math.floor(pos), hi = Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  }
  function latencySeries() {
    return data.latency.map(function (c, i) {
      return { label: c.config, stroke: COLORS[i % COLORS.length], width: 1.5, points: { show: false },
               value: function (u, v) { return v == null ? "" : fmt(v) + " ms"; } };
    });
  }
  function drawLatencyQuantiles(el) {
    var x = [];
    for (var p = 0; p <= 100; p++) x.push(p);
    var rows = [x];
    data.latency.forEach(function (c) {
      var s = c.samples_ms.slice().sort(function (a, b) { return a - b; });
      rows.push(x.map(function (p) { return quantile(s, p / 100); }));
    });
    plot(el, { scales: { x: { time: false } }, series: [{ label: "percentile" }].concat(latencySeries()),
               axes: [{ label: "percentile" }, { label: "ms", values: function (u, s) { return s.map(fmt); } }] }, rows);
  }
  function drawLatencyRuns(el) {
    var n = 0;
    data.latency.forEach(function (c) { n = Math.max(n, c.samples_ms.length); });
    var x = [];
    for (var i = 1; i <= n; i++) x.push(i);
    var rows = [x];
    data.latency.forEach(function (c) {
      rows.push(x.map(function (k) { return k <= c.samples_ms.length ? c.samples_ms[k - 1] : null; }));
    });
    plot(el, { scales: { x: { time: false } }, series: [{ label: "run" }].concat(latencySeries()),
               axes: [{ label: "timed run" }, { label: "ms", values: function (u, s) { return s.map(fmt); } }] }, rows);
  }

  function drawSqnr(el) {
    // SQNR in dB per matched layer (higher is better); an exact layer (+inf) leaves a gap.
    var pts = data.quant_sqnr, x = [], cum = [], loc = [];
    function db(v) { var d = num(v); return v == null || !isFinite(d) ? null : d; }
    for (var i = 0; i < pts.length; i++) {
      x.push(i);
      cum.push(db(pts[i].sqnr_db));
      loc.push(db(pts[i].local_sqnr_db));
    }
    plot(el, {
      scales: { x: { time: false } },
      series: [
        { label: "layer", value: function (u, v, s, idx) {
            return idx == null || !pts[idx] ? "" : pts[idx].node + " (" + pts[idx].op_type + ")"; } },
        { label: "SQNR, cumulative (dB)", stroke: "#2f5fb3", width: 1.5, value: function (u, v) { return fmt(v); } },
        { label: "SQNR, local (dB)", stroke: "#d9822b", width: 1.5, value: function (u, v) { return fmt(v); } }
      ],
      axes: [{ label: "matched layer, topological order" }, { label: "dB", size: 50 }]
    }, [x, cum, loc]);
  }

  // A corpus check (check --corpus): KL per step index (median, p95, max over
  // prompts; log scale, 0 drawn at 1e-18) and the share agreeing; the same per prompt.
  function klOrFloor(v) { var d = num(v); return isNaN(d) ? null : Math.max(d, 1e-18); }
  function drawCorpus(el, x, xLabel, series, agreement) {
    var rows = [x], opts = [{ label: xLabel }];
    series.forEach(function (s, i) {
      rows.push(s[1].map(klOrFloor));
      opts.push({ label: s[0], stroke: COLORS[[0, 1, 4][i]], width: 1.5, scale: "kl", value: function (u, v) { return fmt(v); } });
    });
    rows.push(agreement);
    opts.push({ label: "top token agrees (share)", stroke: COLORS[2], dash: [4, 3], width: 1.5, scale: "share",
                value: function (u, v) { return fmt(v); } });
    plot(el, { scales: { x: { time: false }, kl: { distr: 3, log: 10 }, share: { range: [0, 1.05] } }, series: opts,
               axes: [{ label: xLabel }, { scale: "kl", label: "KL (nats)", size: 60, values: function (u, s) { return s.map(fmt); } },
                      { scale: "share", side: 1, label: "agreeing", grid: { show: false } }] }, rows);
  }
  function drawCorpusSteps(el) {
    var d = data.corpus_steps, x = d.agreement.map(function (v, i) { return i; });
    drawCorpus(el, x, "step", [["KL median", d.kl_median], ["KL p95", d.kl_p95], ["KL max", d.kl_max]], d.agreement);
  }
  function drawCorpusPrompts(el) {
    var d = data.corpus_prompts;
    drawCorpus(el, d.index, "prompt", [["largest KL", d.kl_max], ["mean KL", d.kl_mean]], d.agreement);
  }

  var DRAW = { layer_curve: drawLayers, quant_sqnr: drawSqnr, histogram: drawHistogram,
               latency_quantiles: drawLatencyQuantiles, latency_runs: drawLatencyRuns,
               corpus_steps: drawCorpusSteps, corpus_prompts: drawCorpusPrompts };
  var charts = document.querySelectorAll("[data-chart]");
  for (var i = 0; i < charts.length; i++) {
    var kind = charts[i].getAttribute("data-chart");
    if (DRAW[kind]) DRAW[kind](charts[i]);
  }
  // How wide the page laid out, once drawn: a reader's window of 1400 px must
  // hold it without a horizontal scroll (html_test.cc checks it).
  document.documentElement.setAttribute("data-scroll-width", String(document.documentElement.scrollWidth));
})();
