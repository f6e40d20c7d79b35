// Turning a drawing into the model's input, the way scikit-learn's digits were made.
//
// sklearn's load_digits is UCI's "optdigits": each handwritten digit was size-normalized and
// centred in a 32x32 binary bitmap, which was cut into 4x4 blocks; the count of ink pixels in a
// block (0..16) is one of the 8x8 features. The model (scripts/make_digits_model.py) takes
// those counts divided by 16, i.e. [0, 1]. So a drawing becomes: strokes -> fitted into 32x32
// (aspect kept, centred) -> thresholded bitmap -> 4x4 block counts -> /16.
//
// slant() is scripts/make_digits_model.py's slant(), the shear that made the bundled
// "personal" handwriting (0.35 px per row): row r moves right by s * ((h-1)/2 - r), bilinear.

export const SIZE = 32;
export const GRID = 8;
const BLOCK = SIZE / GRID;
// Pen width in the 32x32 bitmap and the box the stroke centre lines are fitted into: the optdigits
// digits are drawn with a broad pen (about 300 of the 1024 pixels inked on average), fill the
// height and leave the outer block columns (0 and 7) almost always empty. These values give
// drawings the same statistics (and the pretrained model reads clean drawings of 0-9 right).
const PEN = 6.5;
const FIT_H = 24;
const FIT_W = 16;

/** Bounding box of strokes ([[{x,y}, ...], ...]); null when there is no ink. */
export function bounds(strokes) {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const s of strokes) {
    for (const p of s) {
      x0 = Math.min(x0, p.x);
      y0 = Math.min(y0, p.y);
      x1 = Math.max(x1, p.x);
      y1 = Math.max(y1, p.y);
    }
  }
  return x0 === Infinity ? null : { x0, y0, x1, y1, w: x1 - x0, h: y1 - y0 };
}

/** Renders strokes, fitted and centred, into a SIZE x SIZE bitmap (Uint8Array of 0/1). */
export function rasterize(strokes) {
  const b = bounds(strokes);
  const bitmap = new Uint8Array(SIZE * SIZE);
  if (!b) return bitmap;
  const canvas = new OffscreenCanvas(SIZE, SIZE);
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  // Scale to the fit box, keeping the aspect ratio (a "1" stays narrow).
  const scale = Math.min(FIT_H / Math.max(b.h, 1), FIT_W / Math.max(b.w, 1));
  const cx = (b.x0 + b.x1) / 2;
  const cy = (b.y0 + b.y1) / 2;
  ctx.setTransform(scale, 0, 0, scale, SIZE / 2 - cx * scale, SIZE / 2 - cy * scale);
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.lineWidth = PEN / scale;
  ctx.strokeStyle = '#000';
  ctx.fillStyle = '#000';
  for (const s of strokes) {
    if (s.length === 1) {
      ctx.beginPath();
      ctx.arc(s[0].x, s[0].y, PEN / 2 / scale, 0, 2 * Math.PI);
      ctx.fill();
      continue;
    }
    ctx.beginPath();
    ctx.moveTo(s[0].x, s[0].y);
    for (const p of s.slice(1)) ctx.lineTo(p.x, p.y);
    ctx.stroke();
  }
  const { data } = ctx.getImageData(0, 0, SIZE, SIZE);
  for (let i = 0; i < SIZE * SIZE; i++) bitmap[i] = data[4 * i + 3] >= 128 ? 1 : 0;
  return bitmap;
}

/** 32x32 bitmap -> 64 features: ink pixels per 4x4 block (0..16) / 16, row-major. */
export function blockCounts(bitmap) {
  const out = new Float32Array(GRID * GRID);
  for (let r = 0; r < SIZE; r++) {
    for (let c = 0; c < SIZE; c++) {
      if (bitmap[r * SIZE + c]) out[((r / BLOCK) | 0) * GRID + ((c / BLOCK) | 0)] += 1;
    }
  }
  for (let i = 0; i < out.length; i++) out[i] /= BLOCK * BLOCK;
  return out;
}

/** scripts/make_digits_model.py's slant(): horizontal shear of an h x w image, bilinear. */
export function slant(img, s, h = GRID, w = GRID) {
  const out = new Float32Array(h * w);
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      const src = c - s * ((h - 1) / 2 - r);
      const x0 = Math.floor(src);
      const f = src - x0;
      if (x0 >= 0 && x0 < w) out[r * w + c] += (1 - f) * img[r * w + x0];
      if (x0 + 1 >= 0 && x0 + 1 < w) out[r * w + c] += f * img[r * w + x0 + 1];
    }
  }
  return out;
}

/** Strokes -> the model's 64 inputs in [0, 1]; with slantPx, sheared like the bundled set. */
export function features(strokes, slantPx = 0) {
  const f = blockCounts(rasterize(strokes));
  return slantPx ? slant(f, slantPx) : f;
}

/** Paints 64 features in [0,1] as an 8x8 image on a canvas (ink dark on paper). */
export function paintDigit(canvas, x, { ink = [22, 30, 48], paper = [255, 255, 255] } = {}) {
  const ctx = canvas.getContext('2d');
  const img = ctx.createImageData(GRID, GRID);
  for (let i = 0; i < GRID * GRID; i++) {
    const v = Math.max(0, Math.min(1, x[i]));
    for (let k = 0; k < 3; k++) img.data[4 * i + k] = Math.round(paper[k] + (ink[k] - paper[k]) * v);
    img.data[4 * i + 3] = 255;
  }
  const tmp = new OffscreenCanvas(GRID, GRID);
  tmp.getContext('2d').putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(tmp, 0, 0, canvas.width, canvas.height);
}

/** Encodes features exactly (float32 bytes, base64) for storing with the checkpoint. */
export function encodeSample(x) {
  const b = new Uint8Array(Float32Array.from(x).buffer);
  let s = '';
  for (const v of b) s += String.fromCharCode(v);
  return btoa(s);
}

export function decodeSample(s) {
  const b = Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  return new Float32Array(b.buffer);
}
