// The live training chart, drawn by hand on a <canvas>: training loss per step (left axis,
// blue line) and accuracy on the personal test split after each epoch (right axis, 0-100 %,
// green points joined by a line). Redraws cheaply on every progress event.

const COLORS = { loss: '#2f6fe4', lossFill: 'rgba(47,111,228,0.10)', acc: '#16a36a', grid: '#e6e9ef', axis: '#8a93a6', text: '#4b5468', base: '#c2410c' };

export class Chart {
  constructor(canvas) {
    this.canvas = canvas;
    this.reset();
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** totalSteps: x-axis length; baseline: accuracy before fine-tuning (a dashed line). */
  reset({ totalSteps = 0, stepsPerEpoch = 1, baseline = null } = {}) {
    this.loss = []; // [step, loss]
    this.acc = []; // [step, accuracy]
    this.totalSteps = totalSteps;
    this.stepsPerEpoch = stepsPerEpoch;
    this.baseline = baseline;
    this.draw();
  }

  addLoss(step, loss) {
    this.loss.push([step, loss]);
    this.draw();
  }

  addAccuracy(step, acc) {
    this.acc.push([step, acc]);
    this.draw();
  }

  toJSON() {
    return { loss: this.loss, acc: this.acc, totalSteps: this.totalSteps, stepsPerEpoch: this.stepsPerEpoch, baseline: this.baseline };
  }

  restore(h) {
    Object.assign(this, { loss: h.loss ?? [], acc: h.acc ?? [], totalSteps: h.totalSteps ?? 0, stepsPerEpoch: h.stepsPerEpoch ?? 1, baseline: h.baseline ?? null });
    this.draw();
  }

  draw() {
    const c = this.canvas;
    const dpr = window.devicePixelRatio || 1;
    const W = c.clientWidth || 600;
    const H = c.clientHeight || 260;
    if (c.width !== Math.round(W * dpr) || c.height !== Math.round(H * dpr)) {
      c.width = Math.round(W * dpr);
      c.height = Math.round(H * dpr);
    }
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    g.font = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
    const pad = { l: 48, r: 48, t: 14, b: 34 };
    const pw = W - pad.l - pad.r;
    const ph = H - pad.t - pad.b;
    const total = Math.max(this.totalSteps, this.loss.at(-1)?.[0] ?? 0, 1);
    const maxLoss = niceMax(Math.max(0.5, ...this.loss.map((p) => p[1]).filter(Number.isFinite)));
    const X = (s) => pad.l + (s / total) * pw;
    const YL = (v) => pad.t + ph - (Math.min(v, maxLoss) / maxLoss) * ph;
    const YA = (a) => pad.t + ph - a * ph;

    // Grid and axes.
    g.strokeStyle = COLORS.grid;
    g.lineWidth = 1;
    g.fillStyle = COLORS.text;
    for (let i = 0; i <= 4; i++) {
      const y = Math.round(pad.t + (ph * i) / 4) + 0.5;
      g.beginPath();
      g.moveTo(pad.l, y);
      g.lineTo(pad.l + pw, y);
      g.stroke();
      g.textAlign = 'right';
      g.textBaseline = 'middle';
      g.fillStyle = COLORS.loss;
      if (this.loss.length) g.fillText(fmt(maxLoss * (1 - i / 4)), pad.l - 8, y);
      g.textAlign = 'left';
      g.fillStyle = COLORS.acc;
      g.fillText(`${100 - 25 * i}%`, pad.l + pw + 8, y);
    }
    // Epoch ticks.
    g.fillStyle = COLORS.axis;
    g.textAlign = 'center';
    g.textBaseline = 'top';
    const epochs = Math.round(total / this.stepsPerEpoch);
    if (this.totalSteps && epochs <= 40) {
      const every = Math.ceil(epochs / 10);
      for (let e = 0; e <= epochs; e += every) g.fillText(String(e), X(e * this.stepsPerEpoch), pad.t + ph + 6);
      g.fillText('epoch', pad.l + pw / 2, pad.t + ph + 20);
    }

    if (!this.loss.length && !this.acc.length) {
      g.fillStyle = COLORS.axis;
      g.textBaseline = 'middle';
      g.font = '14px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
      g.fillText('Loss and accuracy appear here while the model trains', pad.l + pw / 2, pad.t + ph / 2);
    }

    // Accuracy before fine-tuning (dashed).
    if (this.baseline !== null) {
      g.setLineDash([5, 4]);
      g.strokeStyle = COLORS.base;
      g.beginPath();
      g.moveTo(pad.l, YA(this.baseline));
      g.lineTo(pad.l + pw, YA(this.baseline));
      g.stroke();
      g.setLineDash([]);
      g.fillStyle = COLORS.base;
      g.textAlign = 'right';
      g.textBaseline = 'top';
      g.fillText(`before: ${(100 * this.baseline).toFixed(1)}%`, pad.l + pw - 4, YA(this.baseline) + 4);
    }

    // Loss: filled area + line.
    if (this.loss.length) {
      g.beginPath();
      g.moveTo(X(this.loss[0][0]), YL(this.loss[0][1]));
      for (const [s, v] of this.loss) g.lineTo(X(s), YL(v));
      g.strokeStyle = COLORS.loss;
      g.lineWidth = 1.6;
      g.lineJoin = 'round';
      g.stroke();
      g.lineTo(X(this.loss.at(-1)[0]), pad.t + ph);
      g.lineTo(X(this.loss[0][0]), pad.t + ph);
      g.closePath();
      g.fillStyle = COLORS.lossFill;
      g.fill();
    }

    // Accuracy: line + points.
    if (this.acc.length) {
      g.strokeStyle = COLORS.acc;
      g.lineWidth = 2;
      g.beginPath();
      this.acc.forEach(([s, a], i) => (i ? g.lineTo(X(s), YA(a)) : g.moveTo(X(s), YA(a))));
      g.stroke();
      g.fillStyle = '#fff';
      for (const [s, a] of this.acc) {
        g.beginPath();
        g.arc(X(s), YA(a), 3.5, 0, 2 * Math.PI);
        g.fill();
        g.stroke();
      }
    }

    // Frame.
    g.strokeStyle = COLORS.axis;
    g.lineWidth = 1;
    g.beginPath();
    g.moveTo(pad.l + 0.5, pad.t);
    g.lineTo(pad.l + 0.5, pad.t + ph + 0.5);
    g.lineTo(pad.l + pw, pad.t + ph + 0.5);
    g.stroke();
  }
}

/** A maximum for 4 grid intervals with round labels (0.6 -> 2.4, 0.5 -> 2.0, ...). */
function niceMax(v) {
  const step = v / 4;
  const e = 10 ** Math.floor(Math.log10(step));
  for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * e >= step - 1e-12) return 4 * m * e;
  return 40 * e;
}

function fmt(v) {
  return String(Number(v.toPrecision(3)));
}
