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

// GET target from the view's HTTP server on 127.0.0.1:port: {code, body} (code 0 when the
// answer has no status line).
export function httpGet(port, target) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1", () => {
      sock.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    });
    let data = "";
    sock.on("data", (d) => { data += d.toString("latin1"); });
    sock.on("end", () => resolve({ code: Number((data.match(/^HTTP\/1\.[01] (\d+)/) || [])[1] || 0), body: data }));
    sock.on("error", reject);
  });
}

// Polls pred() (sync or async) until it returns a truthy value; fails naming `what` after
// `seconds`.
export async function until(what, pred, seconds = 20, describe = null) {
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
// robot: a robot description (object) instead of the club arm.
export async function startAchilles(extra = [], mode = "lockstep", robot = null) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-view-"));
  const cfgPath = path.join(env.src, "configs", "club_arm.json");
  const cfg = robot || JSON.parse(fs.readFileSync(cfgPath, "utf8"));
  if (typeof cfg.sensors === "string") cfg.sensors = path.resolve(path.dirname(cfgPath), cfg.sensors);
  cfg.transports = Object.assign({}, cfg.transports, {
    zmq: { pub: `ipc://${dir}/pub`, cmd: `ipc://${dir}/cmd`, ctl: `ipc://${dir}/ctl` },
  });
  const config = path.join(dir, "arm.json");
  fs.writeFileSync(config, JSON.stringify(cfg));
  const args = ["run", config, "--mode", mode, "--view", "127.0.0.1:0", "--quiet", "--status-period", "0.2", "--watchdog", "0", ...extra];
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

export async function stopAchilles(a) {
  if (a.proc.exitCode === null) {
    a.proc.kill("SIGINT");
    await until("achilles to exit after SIGINT", () => a.proc.exitCode !== null, 20);
  }
  fs.rmSync(a.dir, { recursive: true, force: true });
  return a.proc.exitCode;
}
