// Times onnxruntime (the npm package onnxruntime-node) on one ONNX test case: its inputs from
// test_data_set_0/input_*.pb, ROUNDS rounds of ITERS runs after a warm-up; prints the median
// round's ms per run. Threads as given, spinning off (passive waiting, as every peer in bench/).
//   NODE_PATH=<dir>/node_modules node bench/ort_time.js CASE_DIR THREADS ITERS ROUNDS
const ort = require('onnxruntime-node');
const fs = require('fs');
const path = require('path');

// TensorProto, only the fields test inputs use: dims (1), data_type (2), raw_data (9), name (8).
function readTensor(file) {
  const b = fs.readFileSync(file);
  let i = 0;
  const varint = () => { let v = 0n, s = 0n; for (;;) { const c = b[i++]; v |= BigInt(c & 0x7f) << s; if (!(c & 0x80)) return v; s += 7n; } };
  const t = {dims: [], type: 0, raw: null, name: ''};
  while (i < b.length) {
    const key = Number(varint()), field = key >> 3, wire = key & 7;
    if (wire === 0) { const v = varint(); if (field === 1) t.dims.push(Number(v)); else if (field === 2) t.type = Number(v); }
    else if (wire === 2) {
      const n = Number(varint()), bytes = b.subarray(i, i + n); i += n;
      if (field === 9) t.raw = bytes; else if (field === 8) t.name = bytes.toString();
      else if (field === 1) { let j = 0; const s = bytes; while (j < s.length) { let v = 0n, sh = 0n; for (;;) { const c = s[j++]; v |= BigInt(c & 0x7f) << sh; if (!(c & 0x80)) break; sh += 7n; } t.dims.push(Number(v)); } }
    } else if (wire === 5) i += 4; else if (wire === 1) i += 8; else throw new Error(`${file}: unsupported wire type ${wire}`);
  }
  const types = {1: ['float32', Float32Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 11: ['float64', Float64Array]};
  if (!types[t.type] || !t.raw) throw new Error(`${file}: element type ${t.type} without raw_data is not supported here`);
  const [name, Arr] = types[t.type];
  const copy = new Uint8Array(t.raw);  // aligned
  return [t.name, new ort.Tensor(name, new Arr(copy.buffer, 0, copy.byteLength / Arr.BYTES_PER_ELEMENT), t.dims)];
}

async function main() {
  const [dir, threads, iters, rounds] = process.argv.slice(2);
  const data = path.join(dir, 'test_data_set_0');
  const inputs = fs.readdirSync(data).filter(f => f.startsWith('input_')).sort().map(f => readTensor(path.join(data, f)));
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1, graphOptimizationLevel: 'all',
    extra: {session: {intra_op: {allow_spinning: '0'}, inter_op: {allow_spinning: '0'}}}});
  const createMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  session.inputNames.forEach((n, k) => { feeds[n] = inputs[k][1]; });
  for (let k = 0; k < Math.max(3, Number(iters) / 5); ++k) await session.run(feeds);
  const times = [];
  for (let r = 0; r < Number(rounds); ++r) {
    const s = process.hrtime.bigint();
    for (let k = 0; k < Number(iters); ++k) await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - s) / 1e6 / Number(iters));
  }
  times.sort((a, b) => a - b);
  console.log(`${times[Math.floor(times.length / 2)].toFixed(4)} ${createMs.toFixed(1)}`);
}
main().catch(e => { console.error(String(e)); process.exit(1); });
