// tests/hil/view/chromium.mjs: headless Chromium (Debian's chromium) driven over the DevTools
// protocol for the view's page tests: start it (or skip when it cannot start), open pages that
// collect console errors, evaluate in them, take screenshots, decode them (PNG), stop it.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { fail, sleep, until, SKIP } from "./common.mjs";

// --- Chromium over the DevTools protocol ----------------------------------------------------------

export async function startChromium(WebSocket, size = [1100, 620]) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "achilles-chromium-"));
  const exe = ["chromium", "chromium-browser", "google-chrome"].map((n) => `/usr/bin/${n}`).find((p) => fs.existsSync(p));
  if (!exe) {
    console.log("SKIP: chromium is not installed (tools/scripts/bootstrap.sh deps installs Debian's chromium)");
    process.exit(SKIP);
  }
  const args = ["--headless", "--no-sandbox", "--disable-gpu-sandbox", "--use-angle=swiftshader",
    "--enable-unsafe-swiftshader", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
    "--mute-audio", `--user-data-dir=${profile}`, "--remote-debugging-port=0", `--window-size=${size[0]},${size[1]}`, "about:blank"];
  const proc = spawn(exe, args, { stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d.toString(); });
  const portFile = path.join(profile, "DevToolsActivePort");
  const end = Date.now() + 30000;
  while (!fs.existsSync(portFile) || fs.readFileSync(portFile, "utf8").split("\n").length < 2) {
    if (proc.exitCode !== null || Date.now() > end) {
      console.log(`SKIP: chromium could not start (${proc.exitCode !== null ? `exit ${proc.exitCode}` : "no DevTools port after 30 s"}):\n${err.slice(-2000)}`);
      proc.kill("SIGKILL");
      process.exit(SKIP);
    }
    await sleep(50);
  }
  const [port, wsPath] = fs.readFileSync(portFile, "utf8").split("\n");
  const ws = new WebSocket(`ws://127.0.0.1:${port}${wsPath}`, { perMessageDeflate: false, maxPayload: 256 << 20 });
  await new Promise((resolve, reject) => { ws.on("open", resolve); ws.on("error", reject); });
  const cdp = { ws, proc, profile, id: 0, waiting: new Map(), listeners: [] };
  ws.on("message", (data) => {
    const msg = JSON.parse(data.toString());
    if (msg.id && cdp.waiting.has(msg.id)) {
      const { resolve, reject } = cdp.waiting.get(msg.id);
      cdp.waiting.delete(msg.id);
      if (msg.error) reject(new Error(`${JSON.stringify(msg.error)}`)); else resolve(msg.result);
    } else if (msg.method) {
      for (const l of cdp.listeners) l(msg);
    }
  });
  cdp.send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    const id = ++cdp.id;
    cdp.waiting.set(id, { resolve, reject });
    ws.send(JSON.stringify({ id, method, params, sessionId }));
  });
  return cdp;
}

export async function openPage(cdp, url, errors, size = [1100, 620], mobile = false) {
  const { targetId } = await cdp.send("Target.createTarget", { url: "about:blank" });
  const { sessionId } = await cdp.send("Target.attachToTarget", { targetId, flatten: true });
  cdp.listeners.push((msg) => {
    if (msg.sessionId !== sessionId) return;
    if (msg.method === "Runtime.exceptionThrown") errors.push(`exception: ${msg.params.exceptionDetails.text} ${JSON.stringify(msg.params.exceptionDetails.exception?.description || "")}`);
    if (msg.method === "Runtime.consoleAPICalled" && (msg.params.type === "error" || msg.params.type === "assert"))
      errors.push(`console.${msg.params.type}: ${msg.params.args.map((a) => a.value ?? a.description).join(" ")}`);
    if (msg.method === "Log.entryAdded" && msg.params.entry.level === "error") errors.push(`log: ${msg.params.entry.text} ${msg.params.entry.url || ""}`);
  });
  await cdp.send("Runtime.enable", {}, sessionId);
  await cdp.send("Log.enable", {}, sessionId);
  await cdp.send("Page.enable", {}, sessionId);
  await cdp.send("Emulation.setDeviceMetricsOverride", { width: size[0], height: size[1], deviceScaleFactor: 1, mobile }, sessionId);
  await cdp.send("Page.navigate", { url }, sessionId);
  const page = { sessionId, targetId };
  page.eval = async (expr) => {
    const r = await cdp.send("Runtime.evaluate", { expression: expr, awaitPromise: true, returnByValue: true }, sessionId);
    if (r.exceptionDetails) fail(`page evaluation of ${expr} threw: ${r.exceptionDetails.exception?.description || r.exceptionDetails.text}`);
    return r.result.value;
  };
  return page;
}

// --- a PNG decoder (8-bit RGB/RGBA, no interlace: what Chromium writes) ------------------------

export function decodePng(buf) {
  let pos = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString("latin1", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0), height = data.readUInt32BE(4);
      if (data[8] !== 8 || data[12] !== 0) fail("screenshot PNG: expected 8-bit, not interlaced");
      channels = { 2: 3, 6: 4 }[data[9]];
      if (!channels) fail(`screenshot PNG: colour type ${data[9]} not handled`);
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels, out = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[y * stride + x - channels] : 0, b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? out[(y - 1) * stride + x - channels] : 0;
      let p = line[x];
      if (f === 1) p += a; else if (f === 2) p += b; else if (f === 3) p += (a + b) >> 1;
      else if (f === 4) { const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c); p += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      out[y * stride + x] = p & 255;
    }
  }
  return { width, height, channels, pixels: out };
}


// Closes a page (a page left open keeps drawing and slows the next ones).
export async function closePage(cdp, page) {
  await cdp.send("Target.closeTarget", { targetId: page.targetId }).catch(() => {});
}

// A screenshot of the page (brought to the front: a background tab draws no frames), decoded.
export async function screenshot(cdp, page, file = null) {
  await cdp.send("Page.bringToFront", {}, page.sessionId);
  const shot = await cdp.send("Page.captureScreenshot", { format: "png" }, page.sessionId);
  const png = Buffer.from(shot.data, "base64");
  if (file) fs.writeFileSync(file, png);
  return decodePng(png);
}

// The pixel at (x, y) as [r, g, b].
export function pixel(img, x, y) {
  const o = (Math.round(y) * img.width + Math.round(x)) * img.channels;
  return [img.pixels[o], img.pixels[o + 1], img.pixels[o + 2]];
}

export async function stopChromium(cdp) {
  await Promise.race([cdp.send("Browser.close"), sleep(5000)]).catch(() => {}); // closes its helpers too
  cdp.ws.close();
  if (cdp.proc.exitCode === null && cdp.proc.signalCode === null) cdp.proc.kill("SIGTERM");
  await until("chromium to exit", () => cdp.proc.exitCode !== null || cdp.proc.signalCode !== null, 20).catch(() => cdp.proc.kill("SIGKILL"));
  try { // a helper process may still be writing its profile for a moment
    fs.rmSync(cdp.profile, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
  } catch (e) {
    console.log(`warning: could not remove chromium's profile ${cdp.profile}: ${e.message}`);
  }
}
