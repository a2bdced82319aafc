// The console's one chart: time series drawn by uPlot (a small, fast chart library), with a time
// axis and the values under the cursor in its legend; horizontal levels (a policy's target) and
// marks on the time line (scaling activities) drawn on the same canvas and listed below it for
// screen readers; the chart's summary as its caption. Every chart of the console is one of these.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useEffect, useRef } from 'preact/hooks';
import { time } from './ui.jsx';

/** The colours of a series, level or mark by its class (style.css has the legend's). */
const COLOURS = {
  desired: '#1f6feb',
  'in-service': '#1a7f37',
  pending: '#bf8700',
  metric: '#1f6feb',
  target: '#cf222e',
  activity: '#8250df',
  out: '#1a7f37',
  in: '#cf222e',
};
const colour = (cls) => COLOURS[cls] || '#57606a';
/** Series drawn dashed, so that one on top of another still shows. */
const DASHES = { desired: [6, 4], pending: [2, 3] };

/** The indices of values with no neighbour (a datapoint between gaps): drawn as dots, since a
 * line needs two. */
function isolated(values) {
  return values.flatMap((v, i) => (v !== null && values[i - 1] == null && values[i + 1] == null ? [i] : []));
}

/** A number as the charts write it: whole from 100 up, else three significant digits. */
export function fmt(v) {
  if (v === null || v === undefined) return 'no data';
  return Math.abs(v) >= 100 ? v.toFixed(0) : Number(v.toPrecision(3)).toString();
}

/** uPlot's columns: the times (seconds) every series has a point at, then each series' values. */
function columns(series) {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p.t)))].sort((a, b) => a - b);
  const values = series.map((s) => {
    const at = new Map(s.points.map((p) => [p.t, p.y]));
    return times.map((t) => (at.has(t) ? at.get(t) : null));
  });
  return [times.map((t) => t / 1000), ...values];
}

/** Levels and marks on the canvas, over the plot (uPlot's draw hook). */
function drawExtras(u, extras) {
  const { ctx, bbox } = u;
  ctx.save();
  ctx.lineWidth = 1.5 * devicePixelRatio;
  for (const level of extras.levels) {
    const y = u.valToPos(level.value, 'y', true);
    ctx.strokeStyle = colour(level.cls);
    ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(bbox.left, y);
    ctx.lineTo(bbox.left + bbox.width, y);
    ctx.stroke();
  }
  ctx.setLineDash([2 * devicePixelRatio, 3 * devicePixelRatio]);
  for (const mark of extras.marks) {
    const x = u.valToPos(mark.at / 1000, 'x', true);
    if (x < bbox.left || x > bbox.left + bbox.width) continue;
    ctx.strokeStyle = colour(mark.cls);
    ctx.beginPath();
    ctx.moveTo(x, bbox.top);
    ctx.lineTo(x, bbox.top + bbox.height);
    ctx.stroke();
  }
  ctx.restore();
}

/**
 * `series`: [{label, cls, points: [{t (ms), y (a number, or null where there is no datapoint)}]}];
 * `levels`: [{value, label, cls}]; `marks`: [{at (ms), text, cls}]; `caption`: what the chart says
 * now; `compact`: a small figure among many (no axes, no legend, the caption above it).
 */
export function Chart({ series, levels = [], marks = [], caption, captionId, label, class: cls = '', height = 170, compact = false }) {
  const box = useRef(null);
  const plot = useRef(null);
  // What the draw hook and the y range read, current at every render.
  const extras = useRef(null);
  extras.current = { levels, marks, top: Math.max(0, ...levels.map((l) => l.value)) };
  const shape = series.map((s) => `${s.label}/${s.cls}`).join(',') + (compact ? ':compact' : '');
  const data = columns(series);

  useEffect(() => {
    const el = box.current;
    const options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [
        { value: (u, v) => (v === null || v === undefined ? '—' : time(new Date(v * 1000).toISOString())) },
        ...series.map((s) => ({
          label: s.label,
          stroke: colour(s.cls),
          width: 2,
          dash: DASHES[s.cls],
          value: (u, v) => fmt(v),
          points: { show: true, size: 6, filter: (u, i) => isolated(u.data[i]) },
        })),
      ],
      scales: {
        x: { time: true },
        y: { range: (u, min, max) => [Math.min(0, min ?? 0), Math.max(extras.current.top, max ?? 0) * 1.15 || 1] },
      },
      axes: compact ? [{ show: false }, { show: false }] : [{}, { size: 44, values: (u, vals) => vals.map(fmt) }],
      legend: { show: !compact },
      cursor: { drag: { x: false, y: false } },
      hooks: { draw: [(u) => drawExtras(u, extras.current)] },
    };
    const u = new uPlot(options, columns(series), el);
    plot.current = u;
    const resized = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape, height]);

  // New datapoints, levels or marks: drawn again on the same plot.
  useEffect(() => {
    plot.current?.setData(data);
  });

  const listed = levels.length + marks.length > 0;
  return (
    <figure class={`chart ${cls}`} aria-labelledby={label ? undefined : captionId} aria-label={label}>
      {compact && <figcaption id={captionId}>{caption}</figcaption>}
      <div ref={box} class="chart-plot" role="img" aria-label={caption} />
      {listed && (
        <ul class="visually-hidden chart-marks" aria-label="On the chart">
          {levels.map((l) => (
            <li key={`level-${l.label}`} class={`level ${l.cls}`} data-value={l.value}>
              {l.label} {fmt(l.value)}
            </li>
          ))}
          {marks.map((m) => (
            <li key={`mark-${m.at}-${m.text}`} class={`mark ${m.cls}`}>
              {time(new Date(m.at).toISOString())}: {m.text}
            </li>
          ))}
        </ul>
      )}
      {!compact && <figcaption id={captionId}>{caption}</figcaption>}
    </figure>
  );
}
