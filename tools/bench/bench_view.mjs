#!/usr/bin/env node
// tools/bench/bench_view.mjs: what the live view costs the loop. Runs the club arm in fast mode (no
// pacing: every tick is the step, its sensors and publishing) for --seconds of wall time each,
// alternating: without the view, and with the view and --viewers browsers' worth of WebSocket
// clients (achilles.view.v1, reading every frame); --rounds pairs. Prints each run's tick
// compute p50/p99 (the `whole run:` line of `achilles run`) and the ratio of the medians.
//   node tools/bench/bench_view.mjs [--achilles build/tools/achilles] [--rounds 3] [--seconds 3]
//                             [--viewers 2] [--max-ratio R]   (exit 1 when the p50 ratio > R)
// Needs the `ws` package: ACHILLES_NODE_DIR (default build/node, where the tests install it).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const opt = { achilles: path.join(root, "build/tools/achilles"), rounds: 3, seconds: 3, viewers: 2, "max-ratio": 0 };
for (let i = 2; i < process.argv.length; i += 2) {
  const k = process.argv[i].replace(/^--/, "");
  if (!(k in opt)) { console.error(`bench_view: unknown option ${process.argv[i]}`); process.exit(2); }
  opt[k] = k === "achilles" ? process.argv[i + 1] : Number(process.argv[i + 1]);
}
const nodeDir = process.env.ACHILLES_NODE_DIR || path.join(root, "build/node");
let WebSocket;
try {
  WebSocket = createRequire(path.join(nodeDir, "package.json"))("ws");
} catch {
  console.log(`SKIP: the npm package ws is not installed in ${nodeDir} (tests/hil/view/npm_setup.sh ${nodeDir})`);
  process.exit(77);
}

function run(view) {
  return new Promise((resolve, reject) => {
    const args = ["run", path.join(root, "configs/club_arm.json"), "--mode", "fast", "--no-zmq",
      "--status-period", "0", "--watchdog", "0"];
    if (view) args.push("--view", "127.0.0.1:0");
    const p = spawn(opt.achilles, args, { stdio: ["ignore", "ignore", "pipe"] });
    let err = "", clients = [], frames = 0, started = false;
    p.stderr.on("data", (d) => {
      err += d.toString();
      const m = !started && err.match(/open http:\/\/(127\.0\.0\.1:\d+)\//);
      if (m) {
        started = true;
        for (let i = 0; i < opt.viewers; i++) {
          const ws = new WebSocket(`ws://${m[1]}/`, "achilles.view.v1");
          ws.on("message", () => { frames++; });
          ws.on("error", () => {});
          clients.push(ws);
        }
      }
    });
    // the clock starts when the run starts; the viewers connect within milliseconds
    setTimeout(() => p.kill("SIGINT"), opt.seconds * 1000);
    p.on("exit", (code) => {
      for (const c of clients) c.terminate();
      const m = err.match(/whole run: .*steps=(\d+) .*compute p50\/p99 ([\d.]+)\/([\d.]+) us/);
      if (code !== 0 || !m) return reject(new Error(`achilles exited ${code}:\n${err}`));
      resolve({ steps: Number(m[1]), p50: Number(m[2]), p99: Number(m[3]), frames });
    });
  });
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const without = [], withView = [];
for (let r = 0; r < opt.rounds; r++) {
  for (const view of [false, true]) {
    const res = await run(view);
    (view ? withView : without).push(res);
    console.log(`round ${r + 1} ${view ? `view, ${opt.viewers} viewers` : "no view        "}: ${(res.steps / opt.seconds / 1000).toFixed(1)} k steps/s, compute p50/p99 ${res.p50}/${res.p99} us${view ? `, ${res.frames} frame messages received` : ""}`);
  }
}
const p50a = median(without.map((x) => x.p50)), p50b = median(withView.map((x) => x.p50));
const p99a = median(without.map((x) => x.p99)), p99b = median(withView.map((x) => x.p99));
const ratio = p50b / p50a;
const rateA = median(without.map((x) => x.steps)), rateB = median(withView.map((x) => x.steps));
console.log(`median steps per run: ${rateA} without the view, ${rateB} with: the whole tick (polling included) costs ${(rateA / rateB).toFixed(3)} times as much`);
console.log(`median compute p50: ${p50a} us without the view, ${p50b} us with ${opt.viewers} viewers: ratio ${ratio.toFixed(3)} (p99 ${p99a} / ${p99b} us)`);
if (opt["max-ratio"] > 0 && ratio > opt["max-ratio"]) {
  console.log(`FAIL: the tick with ${opt.viewers} viewers costs ${ratio.toFixed(3)} times the tick without (bound ${opt["max-ratio"]})`);
  process.exit(1);
}
