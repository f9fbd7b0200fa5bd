// strato console: the overview's live charts, drawn on canvases from
// /api/rates (samples this meta replica takes every few seconds).
"use strict";
(function () {
  function human(v, bytes) {
    const units = bytes ? ["B", "KiB", "MiB", "GiB", "TiB"] : ["", "k", "M", "G", "T"];
    const base = bytes ? 1024 : 1000;
    let i = 0;
    let x = Math.abs(v);
    while (x >= base && i < units.length - 1) { x /= base; i++; }
    return (v < 0 ? "-" : "") + x.toFixed(x < 10 && i > 0 ? 1 : 0) + " " + units[i] + (bytes ? "/s" : "/s");
  }
  function draw(id, points, bytes) {
    const c = document.getElementById(id);
    if (!c || !c.getContext) return;
    const g = c.getContext("2d");
    const w = c.width, h = c.height, pad = 22;
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#667085";
    if (points.length < 2) { g.fillText("waiting for samples…", 8, h / 2); return; }
    const t0 = points[0][0], t1 = points[points.length - 1][0];
    let top = Math.max(1, ...points.map(p => p[1]));
    g.strokeStyle = "#e4e7ec";
    g.beginPath(); g.moveTo(0, h - pad); g.lineTo(w, h - pad); g.stroke();
    g.fillText(human(top, bytes), 4, 12);
    g.fillText(Math.round((t1 - t0) / 1000) + " s", w - 40, h - 6);
    g.strokeStyle = "#2f6fde"; g.lineWidth = 2;
    g.beginPath();
    points.forEach((p, i) => {
      const x = (t1 === t0) ? 0 : (p[0] - t0) / (t1 - t0) * (w - 8) + 4;
      const y = (h - pad) - Math.max(p[1], 0) / top * (h - pad - 16);
      if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
    });
    g.stroke();
  }
  function refresh() {
    fetch("/api/rates").then(r => r.ok ? r.json() : Promise.reject(r.status)).then(d => {
      const s = d.samples || [];
      draw("chart-ops", s.map(x => [x.t, x.ops_per_s]), false);
      draw("chart-bytes", s.map(x => [x.t, x.write_bytes_per_s]), true);
    }).catch(() => {});
  }
  refresh();
  setInterval(refresh, 5000);
})();
