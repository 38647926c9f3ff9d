// Runs one ONNX model in onnxruntime (the npm package onnxruntime-node) on inputs given as JSON
// and prints its outputs as JSON: make_cases.py's reference. Usage:
//   NODE_PATH=<dir>/node_modules node ort_run.js model.onnx inputs.json
// inputs.json: {"name": {"dtype": "float32"|"int64"|"int32"|"bool", "dims": [...], "data": [...]}}
const ort = require('onnxruntime-node');
const fs = require('fs');

const arrays = {float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array, bool: Uint8Array};

async function main() {
  const [modelPath, inputsPath] = process.argv.slice(2);
  const given = JSON.parse(fs.readFileSync(inputsPath, 'utf8'));
  const feeds = {};
  for (const [name, t] of Object.entries(given)) {
    const data = t.dtype === 'int64' ? t.data.map(BigInt) : t.data;
    feeds[name] = new ort.Tensor(t.dtype, arrays[t.dtype].from(data), t.dims);
  }
  const session = await ort.InferenceSession.create(modelPath, {intraOpNumThreads: 1, interOpNumThreads: 1});
  const results = await session.run(feeds);
  const out = {};
  for (const name of session.outputNames) {
    const r = results[name];
    out[name] = {dtype: r.type, dims: Array.from(r.dims), data: Array.from(r.data, v => (typeof v === 'bigint' ? Number(v) : Number.isFinite(v) ? v : String(v)))};
  }
  process.stdout.write(JSON.stringify(out));
}
main().catch(e => { console.error(String(e)); process.exit(1); });
