#!/usr/bin/env node
// Runs one ONNX model once on ONNX Runtime's CPU execution provider (one
// thread, sequential, every graph optimization unless --opt-level says
// otherwise) and writes its outputs as .npy files: Baton's reference and
// benchmark peer (docs/performance.md).
//
//   node tools/ort/run.js MODEL.onnx OUT_DIR [--input NAME=FILE.npy]...
//                         [--repeat N] [--profile FILE.json]
//                         [--opt-level disabled|basic|extended|all]
//                         [--threads N]
//
// Every graph input needs an --input. Each output is written to
// OUT_DIR/<output name>.npy (characters other than [A-Za-z0-9._-] become _).
// --repeat N: after the written run, one warm-up and N timed runs; prints
// {"times": [ms, ...], "version": "1.30.0"} on stdout.
// --profile FILE: ORT's profiler on for the session; its JSON trace (every
// run: the written one, the warm-up, the timed ones) is copied to FILE.
// --threads N: intraOpNumThreads (default 1; inter-op stays 1, sequential).
// --opt-level: ORT's graphOptimizationLevel (default all). 'disabled' runs
// the graph node by node as written: a QDQ model's DequantizeLinear, float
// op and QuantizeLinear one after another (float-simulated quantization),
// where 'all' fuses them into integer kernels (QLinearConv...).
//
// onnxruntime-node is looked up in $BATON_ORT_DIR, then <repo>/build-ort
// (tools/ort/install.sh installs it there), then Node's usual paths.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const USAGE =
    'usage: node tools/ort/run.js MODEL.onnx OUT_DIR [--input NAME=FILE.npy]... ' +
    '[--repeat N] [--profile FILE.json] [--opt-level disabled|basic|extended|all] ' +
    '[--threads N]';

const OPT_LEVELS = ['disabled', 'basic', 'extended', 'all'];

function fail(msg) {
  process.stderr.write(`run.js: ${msg}\n`);
  process.exit(2);
}

// ---- .npy (format 1.0/2.0/3.0 read, 1.0 written; little-endian, C order) ----

// dtype descr <-> ORT tensor type and typed array.
const DTYPES = [
  {descr: '<f4', ort: 'float32', array: Float32Array},
  {descr: '<f8', ort: 'float64', array: Float64Array},
  {descr: '<i8', ort: 'int64', array: BigInt64Array},
  {descr: '<u8', ort: 'uint64', array: BigUint64Array},
  {descr: '<i4', ort: 'int32', array: Int32Array},
  {descr: '<u4', ort: 'uint32', array: Uint32Array},
  {descr: '<i2', ort: 'int16', array: Int16Array},
  {descr: '<u2', ort: 'uint16', array: Uint16Array},
  {descr: '<f2', ort: 'float16', array: Uint16Array},  // raw bits
  {descr: '|i1', ort: 'int8', array: Int8Array},
  {descr: '|u1', ort: 'uint8', array: Uint8Array},
  {descr: '|b1', ort: 'bool', array: Uint8Array},
];

function readNpy(file) {
  let buf;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    fail(`cannot read input file ${file}: ${e.code || e.message}`);
  }
  const bad = (why) => fail(`${file} is not a supported .npy file: ${why}`);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') bad('no NUMPY magic');
  const major = buf[6];
  let headerLen, start;
  if (major === 1) {
    headerLen = buf.readUInt16LE(8);
    start = 10;
  } else if (major === 2 || major === 3) {
    headerLen = buf.readUInt32LE(8);
    start = 12;
  } else {
    bad(`format version ${major}`);
  }
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']*)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) bad(`unparsed header ${JSON.stringify(header)}`);
  if (order[1] === 'True') bad('Fortran order (save it C-contiguous)');
  let d = descr[1];
  if (d === '<b1' || d === '=b1') d = '|b1';
  if (d === '<i1' || d === '=i1') d = '|i1';
  if (d === '<u1' || d === '=u1') d = '|u1';
  const dtype = DTYPES.find((t) => t.descr === d);
  if (!dtype) bad(`dtype '${descr[1]}' (big-endian or unsupported)`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const bytes = count * dtype.array.BYTES_PER_ELEMENT;
  if (buf.length - offset !== bytes) {
    bad(`${buf.length - offset} data bytes, shape [${dims}] needs ${bytes}`);
  }
  // Copy into an aligned buffer of its own (typed arrays need aligned offsets).
  const data = new dtype.array(count);
  Buffer.from(data.buffer).set(buf.subarray(offset, offset + bytes));
  return {dtype, dims, data};
}

function writeNpy(file, descr, dims, data) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

// ---- arguments ----

function parseArgs(argv) {
  const args = {inputs: [], repeat: 0, profile: null, optLevel: 'all', threads: 1, positional: []};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (a === '--input') {
      const v = value();
      const eq = v.indexOf('=');
      if (eq <= 0 || eq === v.length - 1) fail(`--input wants NAME=FILE.npy, got '${v}'`);
      args.inputs.push({name: v.slice(0, eq), file: v.slice(eq + 1)});
    } else if (a === '--repeat') {
      const v = value();
      if (!/^[0-9]+$/.test(v)) fail(`--repeat wants a count >= 0, got '${v}'`);
      args.repeat = Number(v);
    } else if (a === '--threads') {
      const v = value();
      if (!/^[0-9]+$/.test(v) || Number(v) < 1) fail(`--threads wants a count >= 1, got '${v}'`);
      args.threads = Number(v);
    } else if (a === '--profile') {
      args.profile = value();
    } else if (a === '--opt-level') {
      const v = value();
      if (!OPT_LEVELS.includes(v)) {
        fail(`--opt-level wants one of ${OPT_LEVELS.join('|')}, got '${v}'`);
      }
      args.optLevel = v;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (a.startsWith('-')) {
      fail(`unknown option ${a}\n${USAGE}`);
    } else {
      args.positional.push(a);
    }
  }
  if (args.positional.length !== 2) fail(`want MODEL.onnx and OUT_DIR\n${USAGE}`);
  [args.model, args.outDir] = args.positional;
  return args;
}

function loadOrt() {
  const root = path.resolve(__dirname, '..', '..');
  const dirs = [];
  if (process.env.BATON_ORT_DIR) dirs.push(path.resolve(process.env.BATON_ORT_DIR));
  dirs.push(path.join(root, 'build-ort'));
  for (const d of dirs) {
    const p = path.join(d, 'node_modules', 'onnxruntime-node');
    if (fs.existsSync(path.join(p, 'package.json'))) return require(p);
  }
  try {
    return require('onnxruntime-node');
  } catch (e) {
    fail(`onnxruntime-node is not installed (looked in ${dirs.join(', ')}); ` +
         'run tools/ort/install.sh');
  }
}

function safeName(name) {
  return name.replace(/[^A-Za-z0-9._-]/g, '_');
}

// ---- main ----

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (!fs.existsSync(args.model)) fail(`model file ${args.model} does not exist`);
  const ort = loadOrt();

  let profileDir = null;
  const options = {
    executionProviders: ['cpu'],
    intraOpNumThreads: args.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: args.optLevel,
  };
  if (args.profile) {
    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-ort-profile-'));
    options.enableProfiling = true;
    options.profileFilePrefix = path.join(profileDir, 'ort');
  }
  let session;
  try {
    session = await ort.InferenceSession.create(args.model, options);
  } catch (e) {
    fail(`ONNX Runtime cannot load ${args.model}: ${e.message}`);
  }

  const feeds = {};
  for (const {name, file} of args.inputs) {
    if (!session.inputNames.includes(name)) {
      fail(`--input ${name}: the model has no input '${name}' ` +
           `(its inputs: ${session.inputNames.join(', ')})`);
    }
    if (feeds[name]) fail(`--input ${name} given twice`);
    const {dtype, dims, data} = readNpy(file);
    const meta = (session.inputMetadata || []).find((m) => m.name === name);
    if (meta && meta.isTensor && meta.type !== dtype.ort) {
      fail(`--input ${name}: ${file} holds ${dtype.ort}, the model's input is ${meta.type}`);
    }
    feeds[name] = new ort.Tensor(dtype.ort, data, dims);
  }
  const missing = session.inputNames.filter((n) => !feeds[n]);
  if (missing.length) fail(`no --input for the model's input(s): ${missing.join(', ')}`);

  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    fail(`ONNX Runtime failed to run ${args.model}: ${e.message}`);
  }
  fs.mkdirSync(args.outDir, {recursive: true});
  for (const name of session.outputNames) {
    const t = results[name];
    const dtype = DTYPES.find((d) => d.ort === t.type);
    if (!dtype) fail(`output '${name}' has type ${t.type}, which run.js cannot write`);
    let data = t.data;
    if (t.type === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
    writeNpy(path.join(args.outDir, safeName(name) + '.npy'), dtype.descr, t.dims, data);
  }

  if (args.repeat > 0) {
    await session.run(feeds);  // warm-up
    const times = [];
    for (let i = 0; i < args.repeat; ++i) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    process.stdout.write(JSON.stringify({times, version: ort.env.versions.node}) + '\n');
  }

  if (args.profile) {
    session.endProfiling();
    const traces = fs.readdirSync(profileDir).filter((f) => f.endsWith('.json'));
    if (traces.length !== 1) {
      fail(`expected one profile in ${profileDir}, found ${traces.length}`);
    }
    fs.copyFileSync(path.join(profileDir, traces[0]), args.profile);
    fs.rmSync(profileDir, {recursive: true, force: true});
  }
  await session.release();
}

main().catch((e) => fail(e.stack || String(e)));
