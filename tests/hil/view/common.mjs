// tests/hil/view/common.mjs: what the view's tests share: starting `achilles run --view` on a copy of
// the club arm (ZeroMQ on ipc:// sockets in a temporary directory, the view on a free port),
// loading the npm packages the test setup installed, waiting with deadlines.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export const SKIP = 77; // ctest SKIP_RETURN_CODE
const t0 = Date.now();

export const env = {
  bin: process.env.ACHILLES_BIN,
  src: process.env.ACHILLES_SOURCE_DIR,
  node: process.env.ACHILLES_NODE_DIR,
};

// The npm packages (ws, @foxglove/ws-protocol) from the build tree; skips with a message when
// the test setup could not install them (no registry).
export function npm(name) {
  const req = createRequire(path.join(env.node, "package.json"));
  try {
    return req(name);
  } catch (e) {
    console.log(`SKIP: npm package ${name} is not installed in ${env.node} (the view_npm_setup test installs it from the npm registry): ${e.message}`);
    process.exit(SKIP);
  }
}

export function fail(message) {
  console.error(`FAIL: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

export function check(cond, message) {
  if (!cond) fail(message);
  console.log(`ok (${((Date.now() - t0) / 1000).toFixed(1)} s): ${message}`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// GET target from the view's HTTP server on 127.0.0.1:port, with a Host header (the address by
// default): {code, body} (code 0 when the answer has no status line).
export function httpGet(port, target, host = "127.0.0.1") {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1", () => {
      sock.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    });
    let data = "";
    sock.on("data", (d) => { data += d.toString("latin1"); });
    sock.on("end", () => resolve({ code: Number((data.match(/^HTTP\/1\.[01] (\d+)/) || [])[1] || 0), body: data }));
    sock.on("error", reject);
  });
}

// Polls pred() (sync or async) until it returns a truthy value; fails naming `what` after
// `seconds`.
// seconds is what the wait needs on a quiet machine; on a loaded one (CI beside another build) a
// headless browser can stall for many seconds, so no wait gives up before a minute
export async function until(what, pred, seconds = 20, describe = null) {
  seconds = Math.max(seconds, 60);
  const end = Date.now() + seconds * 1000;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) fail(`timed out after ${seconds} s waiting for: ${what}${describe ? ` (${describe()})` : ""}`);
    await sleep(20);
  }
}

// Starts the club arm (lockstep unless told) with the view on 127.0.0.1 and a free port.
// Returns {url, port, proc, dir, stderr()}.
// robot: a robot description (object) instead of the club arm, or the path of a robot file
// (URDF, MJCF), run without ZeroMQ.
export async function startAchilles(extra = [], mode = "lockstep", robot = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-view-"));
  let config = robot, zmq = ["--no-zmq"];
  if (typeof robot !== "string") {
    const cfgPath = path.join(env.src, "configs", "club_arm.json");
    const cfg = robot || JSON.parse(fs.readFileSync(cfgPath, "utf8"));
    if (typeof cfg.sensors === "string") cfg.sensors = path.resolve(path.dirname(cfgPath), cfg.sensors);
    cfg.transports = Object.assign({}, cfg.transports, {
      zmq: { pub: `ipc://${dir}/pub`, cmd: `ipc://${dir}/cmd`, ctl: `ipc://${dir}/ctl` },
    });
    config = path.join(dir, "arm.json");
    fs.writeFileSync(config, JSON.stringify(cfg));
    zmq = [];
  }
  const args = ["run", config, "--mode", mode, "--view", "127.0.0.1:0", "--quiet", "--status-period", "0.2", "--watchdog", "0", ...zmq, ...extra];
  const proc = spawn(env.bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d.toString(); });
  const url = await until("achilles to print the view's URL", () => {
    if (proc.exitCode !== null) fail(`achilles exited with ${proc.exitCode}: ${err}`);
    const m = err.match(/open (http:\/\/127\.0\.0\.1:(\d+)\/)/);
    return m && { url: m[1], port: Number(m[2]) };
  });
  return { ...url, proc, dir, stderr: () => err, config };
}

// A 1 kg ball on a vertical slide above the world's plane (it comes to rest on it): one
// contact whose normal force is m·g, an independent reference.
export const ballOnPlane = {
  name: "ball_on_plane", timestep: 0.001, gravity: [0, 0, -9.81],
  bodies: [{ name: "ball", parent: "world", pos: [0, 0, 0.06], joint: { name: "drop", type: "slide", axis: [0, 0, 1] },
    inertial: { mass: 1.0, com: [0, 0, 0], inertia: [0.001, 0.001, 0.001, 0, 0, 0] } }],
  geoms: [{ name: "floor", body: "world", type: "plane" }, { name: "sphere", body: "ball", type: "sphere", size: [0.05] }],
};

// A lockstep run of robot with a view client that has its model: test(view, sim) runs, then the
// client closes and achilles must exit cleanly (the failure names `what`).
export async function withView(WebSocket, robot, what, test) {
  const sim = await startAchilles([], "lockstep", robot);
  try {
    const view = viewClient(WebSocket, sim.port);
    await view.open;
    await until(`the ${what}'s model`, () => view.model);
    await test(view, sim);
    view.ws.close();
  } finally {
    if ((await stopAchilles(sim)) !== 0) fail(`achilles (${what}) did not exit cleanly:\n${sim.stderr()}`);
  }
}

export async function stopAchilles(a) {
  if (a.proc.exitCode === null) {
    a.proc.kill("SIGINT");
    await until("achilles to exit after SIGINT", () => a.proc.exitCode !== null, 20);
  }
  fs.rmSync(a.dir, { recursive: true, force: true });
  return a.proc.exitCode;
}

// A Foxglove WebSocket client written here (foxglove.websocket.v1, docs/view.md section 4), to
// send what Foxglove's own client would not (ids that are not whole numbers, raw bytes) and to see
// every message in the order it came: `log` holds {kind: "serverInfo" | "advertise" | "status" |
// "parameterValues" | "time" | "data", ...} (time and data with a BigInt `ns`; data with `sub` and
// the payload's `text`).
export function foxRaw(WebSocket, port, options = {}) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ["foxglove.websocket.v1"], options);
  const c = { ws, log: [], info: null, channels: null, closed: false };
  ws.on("message", (data, isBinary) => {
    if (!isBinary) {
      const msg = JSON.parse(data.toString());
      c.log.push({ kind: msg.op, msg });
      if (msg.op === "serverInfo") c.info = msg;
      if (msg.op === "advertise") c.channels = msg.channels;
      return;
    }
    const b = Buffer.from(data);
    if (b[0] === 2) c.log.push({ kind: "time", ns: b.readBigUInt64LE(1) });
    else if (b[0] === 1) c.log.push({ kind: "data", sub: b.readUInt32LE(1), ns: b.readBigUInt64LE(5), text: b.subarray(13).toString() });
    else c.log.push({ kind: `binary op ${b[0]}` });
  });
  ws.on("close", () => { c.closed = true; });
  c.open = new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  c.send = (obj) => ws.send(typeof obj === "string" ? obj : JSON.stringify(obj));
  c.publish = (channel, text) => {
    const head = Buffer.alloc(5);
    head[0] = 1;
    head.writeUInt32LE(channel, 1);
    ws.send(Buffer.concat([head, Buffer.from(text)]));
  };
  c.of = (kind, from = 0) => c.log.slice(from).filter((e) => e.kind === kind);
  c.data = (sub, from = 0) => c.log.slice(from).filter((e) => e.kind === "data" && e.sub === sub);
  // waits for a message of `kind` after position `from` that pred accepts; returns it
  c.next = (kind, from, pred = () => true, what = kind) =>
    until(what, () => c.log.slice(from).find((e) => e.kind === kind && pred(e)));
  c.close = () => ws.close();
  return c;
}

// The view protocol: messages in order, replies matched first in, first out.
export function viewClient(WebSocket, port, options = {}) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, "achilles.view.v1", options);
  const c = { ws, model: null, frame: null, frames: 0, replies: [], statuses: [], closed: false };
  ws.on("message", (data, isBinary) => {
    const text = data.toString();
    const msg = JSON.parse(text);
    if (msg.type === "model") c.model = msg;
    else if (msg.type === "frame") { c.frame = msg; c.frames++; }
    else if (msg.type === "reply") c.replies.push(msg.reply);
    else if (msg.type === "status") c.statuses.push(msg.status);
    if (isBinary) fail("the view protocol sent a binary message");
  });
  ws.on("close", () => { c.closed = true; });
  c.open = new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  c.ask = async (text, what, binary = false) => {
    const n = c.replies.length;
    ws.send(typeof text === "string" || Buffer.isBuffer(text) ? text : JSON.stringify(text), { binary });
    await until(`a reply to ${what}`, () => c.replies.length > n, 20);
    return c.replies[n];
  };
  return c;
}
