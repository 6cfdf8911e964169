// Small GGUF and safetensors files for the readModel tests, written from the format specs.
const enc = new TextEncoder();

class Writer {
  constructor() { this.parts = []; this.size = 0; }
  bytes(b) { this.parts.push(b); this.size += b.length; }
  u32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setUint32(0, v, true); this.bytes(b); }
  u64(v) { const b = new Uint8Array(8); new DataView(b.buffer).setBigUint64(0, BigInt(v), true); this.bytes(b); }
  f32(v) { const b = new Uint8Array(4); new DataView(b.buffer).setFloat32(0, v, true); this.bytes(b); }
  str(s) { const b = enc.encode(s); this.u64(b.length); this.bytes(b); }
  pad(n) { if (this.size % n) this.bytes(new Uint8Array(n - (this.size % n))); }
  join() {
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const p of this.parts) { out.set(p, at); at += p.length; }
    return out;
  }
}

/**
 * GGUF v3. kv: [key, value] with value a string, { u32 }, { f32 }, { f32s: [...] } or { i32s: [...] }
 * (gguf-py's array type for Python ints); tensors:
 * { name, ne, data: Float32Array } (F32) or { name, ne, type, bytes } (zeros, not stored when
 * `headerOnly`: the caller extends the file to its full size, e.g. sparse).
 */
export function gguf(kv, tensors = [], { headerOnly = false } = {}) {
  const w = new Writer();
  w.bytes(enc.encode('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kv.length);
  for (const [k, v] of kv) {
    w.str(k);
    if (typeof v === 'string') { w.u32(8); w.str(v); }
    else if ('u32' in v) { w.u32(4); w.u32(v.u32); }
    else if ('f32' in v) { w.u32(6); w.f32(v.f32); }
    else if ('i32s' in v) { w.u32(9); w.u32(5); w.u64(v.i32s.length); for (const x of v.i32s) w.u32(x >>> 0); }
    else { w.u32(9); w.u32(6); w.u64(v.f32s.length); for (const x of v.f32s) w.f32(x); }
  }
  let offset = 0;
  const sizes = tensors.map((t) => (t.data ? t.data.length * 4 : t.bytes));
  tensors.forEach((t, i) => {
    w.str(t.name);
    w.u32(t.ne.length);
    for (const d of t.ne) w.u64(d);
    w.u32(t.data ? 0 : t.type);
    w.u64(offset);
    offset += Math.ceil(sizes[i] / 32) * 32;
  });
  w.pad(32);
  const dataStart = w.size;
  for (const t of tensors) {
    if (t.data) w.bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    else if (headerOnly) break;
    else w.bytes(new Uint8Array(t.bytes));
    w.pad(32);
  }
  return { bytes: w.join(), fullSize: dataStart + offset };
}

/** safetensors with F32 tensors: { name: { shape, data: Float32Array } }. */
export function safetensors(tensors) {
  const header = {};
  let at = 0;
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [at, at + t.data.length * 4] };
    at += t.data.length * 4;
  }
  let text = JSON.stringify(header);
  while ((8 + text.length) % 8) text += ' ';
  const w = new Writer();
  w.u64(text.length);
  w.bytes(enc.encode(text));
  for (const t of Object.values(tensors)) w.bytes(new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength));
  return w.join();
}

/** .npy 1.0 of a float32 [rows, cols] table. */
export function npy(data, rows, cols) {
  let h = `{'descr': '<f4', 'fortran_order': False, 'shape': (${rows}, ${cols}), }`;
  while ((10 + h.length + 1) % 64) h += ' ';
  h += '\n';
  const w = new Writer();
  w.bytes(Uint8Array.from([0x93, ...enc.encode('NUMPY'), 1, 0]));
  const len = new Uint8Array(2);
  new DataView(len.buffer).setUint16(0, h.length, true);
  w.bytes(len);
  w.bytes(enc.encode(h));
  w.bytes(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return w.join();
}
