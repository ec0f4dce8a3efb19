// tests/hil/view/test_view_protocol.mjs: the view's server without a browser. HTTP serves only its
// fixed list of files (anything else: 404); bad input on the view's WebSocket gets an error
// reply and changes nothing; Foxglove's own client (@foxglove/ws-protocol, from npm) connects,
// sees every channel, subscribes, decodes samples equal to the ZeroMQ streams', publishes
// commands and unsubscribes cleanly. docs/view.md.
import { isDeepStrictEqual } from "node:util";
import { check, fail, httpGet, npm, ballOnPlane, startAchilles, stopAchilles, until, viewClient, withView, SKIP } from "./common.mjs";

const WebSocket = npm("ws");
const { FoxgloveClient } = npm("@foxglove/ws-protocol");

// One raw HTTP request (no URL normalisation on the way), returns the status code.
const httpStatus = async (port, target, host) => (await httpGet(port, target, host)).code;

async function testHttp(port) {
  for (const p of ["/", "/index.html", "/view.js", "/view.css", "/lib/three.min.js", "/lib/OrbitControls.js", "/lib/chart.min.js"]) {
    check((await httpStatus(port, p)) === 200, `GET ${p} is served (200)`);
  }
  for (const p of ["/nope", "/../etc/passwd", "/lib/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
    "/lib/three.js", "/lib/", "/view.js?x=/../../etc/passwd", "//etc/passwd"]) {
    const code = await httpStatus(port, p);
    check(code === 404 || (p.includes("?") && code === 200), `GET ${p} outside the served files gives 404 (got ${code})`);
  }
}

// Who may connect (docs/view.md section 7). A WebSocket a foreign web page would open (its
// Origin) is refused, whole origins compared (a prefix of the own one is not ours); our page's
// and programs' (no Origin) are taken. A request naming a Host the server was not bound for is
// refused before it is read, page or WebSocket: a page on evil.example rebound to 127.0.0.1
// sends Host evil.example and the matching Origin (DNS rebinding).
async function testAccess(port) {
  const attempt = (origin, host) => new Promise((resolve) => {
    const options = {};
    if (origin) options.origin = origin;
    if (host) options.headers = { Host: host };
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, "achilles.view.v1", options);
    ws.on("open", () => { ws.close(); resolve(true); });
    ws.on("error", () => resolve(false));
    ws.on("unexpected-response", (req, res) => { res.resume(); resolve(false); });
  });
  const own = `http://127.0.0.1:${port}`;
  check((await attempt("http://evil.example")) === false, "a WebSocket from a foreign page's Origin is refused");
  check((await attempt(own)) === true, "a WebSocket from the view's own page is taken");
  check((await attempt(null)) === true, "a WebSocket without Origin (a program) is taken");
  for (const o of [`${own}1`, `${own}.evil.example`, `${own}/x`, own.slice(0, -1), `https://127.0.0.1:${port}`]) {
    check((await attempt(o)) === false, `a WebSocket from Origin ${o} (the own origin's prefix or extension) is refused`);
  }
  const evil = `evil.example:${port}`;
  check((await attempt(`http://${evil}`, evil)) === false,
    "DNS rebinding: Host evil.example and its own Origin are refused (the Host is not one the view was bound for)");
  check((await attempt(null, evil)) === false, "a WebSocket naming Host evil.example without Origin is refused too");
  check((await attempt(`http://localhost:${port}`, `localhost:${port}`)) === true, "Host localhost with its Origin is taken");
  check((await httpStatus(port, "/", evil)) === 403, "the page asked with Host evil.example is refused (403)");
  check((await httpStatus(port, "/view.js", `EVIL.example`)) === 403, "any file asked with a foreign Host is refused");
  check((await httpStatus(port, "/", `localhost:${port}`)) === 200, "the page asked with Host localhost is served");
  check((await httpStatus(port, "/", `127.0.0.1:9`)) === 200, "Host 127.0.0.1 with another port (an SSH tunnel's) is served");
}

async function testBadInput(port) {
  const c = viewClient(WebSocket, port);
  await c.open;
  await until("the model message", () => c.model);
  const hello = await c.ask({ cmd: "hello" }, "hello");
  check(hello.ok && hello.sensors.length > 0 && hello.endpoints.ctl.startsWith("ipc://"),
    "hello through the view is the ZeroMQ control handler's reply (sensors, endpoints)");
  const before = (await c.ask({ cmd: "status" }, "status")).status;
  const sigma0 = await c.ask({ cmd: "get_param", sensor: "enc_shoulder", path: "noise.white.sigma" }, "get_param");
  const bad = [
    ["nonsense", "not JSON", "not JSON"],
    ['{"cmd":', "truncated JSON", "not JSON"],
    ['{"cmd":"fly"}', "an unknown request", "cmd"],
    ['{"cmd":"status","extra":1}', "an unknown key", "extra"],
    ['{"cmd":"step","n":0}', "a step of 0", "n:"],
    ['[1,2,3]', "an array", ""],
    [JSON.stringify({ cmd: "set_param", sensor: "enc_shoulder", path: "noise.white.sigma", value: -1 }), "a negative sigma", "must be"],
    ["x".repeat(1 << 20), "a 1 MiB message", "over max_message_bytes"],
    ["{" + " ".repeat(70000) + "}", "a 70 kB message", "over max_message_bytes"],
  ];
  for (const [text, what, says] of bad) {
    const r = await c.ask(text, what);
    check(r.ok === false && typeof r.error === "string" && r.error.includes(says),
      `${what} gets an error reply (${JSON.stringify(r).slice(0, 120)})`);
  }
  const rb = await c.ask(Buffer.from([1, 2, 3]), "a binary message", true);
  check(rb.ok === false && rb.error.includes("binary"), "a binary message gets an error reply");
  check(!c.closed, "the connection stays open after bad input");
  const after = (await c.ask({ cmd: "status" }, "status")).status;
  check(after.steps === before.steps && after.t === before.t, "bad input changed no step or time");
  check(isDeepStrictEqual(after.commands, before.commands), "bad input changed no command counter");
  const sigma1 = await c.ask({ cmd: "get_param", sensor: "enc_shoulder", path: "noise.white.sigma" }, "get_param");
  check(sigma1.value === sigma0.value, "a refused set_param left the parameter as it was");
  c.ws.close();
}

async function testFoxglove(port) {
  const view = viewClient(WebSocket, port);
  await view.open;
  await until("the model message", () => view.model);
  const hello = await view.ask({ cmd: "hello" }, "hello");
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  const client = new FoxgloveClient({ ws });
  let info = null, channels = null, statusErrors = [];
  const last = new Map(); // subscription id → {timestamp, text}
  let received = 0;
  client.on("serverInfo", (i) => { info = i; });
  client.on("advertise", (c) => { channels = c; });
  client.on("status", (s) => { statusErrors.push(s); });
  client.on("message", ({ subscriptionId, timestamp, data }) => {
    received++;
    last.set(subscriptionId, { timestamp, text: new TextDecoder().decode(data) });
  });
  await until("the Foxglove serverInfo and advertise", () => info && channels);
  check(info.supportedEncodings.includes("json") && info.capabilities.includes("clientPublish"),
    "serverInfo: JSON encoding, client publish");
  const expected = new Set(["status", "/tf", "/robot", "/contacts"]);
  for (const s of hello.sensors) { expected.add(s.topic); expected.add(`truth/${s.topic}`); }
  const topics = new Set(channels.map((c) => c.topic));
  check(isDeepStrictEqual(topics, expected), `every stream is advertised (${[...topics].join(" ")})`);
  check(channels.every((c) => c.encoding === "json" && c.schemaEncoding === "jsonschema" && JSON.parse(c.schema).type === "object"),
    "channels carry JSON with a JSON Schema");
  check(channels.find((c) => c.topic === "/tf").schemaName === "foxglove.FrameTransforms",
    "transforms use the well-known foxglove.FrameTransforms schema");
  const subs = new Map(channels.map((c) => [client.subscribe(c.id), c]));

  // step the arm (it falls under gravity), then compare with what ZeroMQ published
  const steps0 = view.frame ? view.frame.steps : 0;
  const granted = await view.ask({ cmd: "step", n: 300 }, "step 300");
  check(granted.ok, "step granted through the view");
  await until("the view's frames to reach the 300 granted steps", () => view.frame && view.frame.steps === steps0 + 300);
  const tEnd = view.frame.t;
  const bySub = (topic) => [...subs].find(([, c]) => c.topic === topic)[0];
  await until(`Foxglove samples of the last step (t = ${tEnd}) on every sensor stream`, () =>
    hello.sensors.every((s) => { const m = last.get(bySub(s.topic)); return m && JSON.parse(m.text).t >= tEnd - 0.0021; }),
    20, () => hello.sensors.map((s) => { const m = last.get(bySub(s.topic)); return `${s.topic}: ${m ? JSON.parse(m.text).t : "none"}`; }).join(", "));
  const latest = await view.ask({ cmd: "latest" }, "latest");
  check(latest.ok && latest.steps === steps0 + 300, "latest (the ZeroMQ transport's newest messages) is at the same step");
  let compared = 0;
  for (const [topic, zmqMsg] of Object.entries(latest.samples)) {
    const m = last.get(bySub(topic));
    if (!m) fail(`no Foxglove message on ${topic}`);
    const fox = JSON.parse(m.text);
    if (!isDeepStrictEqual(fox, zmqMsg)) fail(`${topic}: Foxglove ${m.text} differs from ZeroMQ ${JSON.stringify(zmqMsg)}`);
    if (m.timestamp !== BigInt(Math.round(fox.t * 1e9))) fail(`${topic}: timestamp ${m.timestamp} is not t = ${fox.t} s in ns`);
    compared++;
  }
  check(compared === 2 * hello.sensors.length, `(${Object.keys(latest.samples).join(" ")}) all ${compared} Foxglove streams decode to the ZeroMQ stream's newest sample, nanosecond timestamps`);
  const tf = JSON.parse(last.get(bySub("/tf")).text);
  check(tf.transforms.length === view.model.bodies.length - 1 &&
    tf.transforms.every((x, i) => Math.abs(x.translation.z - view.frame.bodies[i + 1][2]) < 1e-12),
    "the transforms give every body's pose");

  // client publish: a command message on the "commands" channel
  const accepted0 = (await view.ask({ cmd: "status" }, "status")).status.commands.accepted;
  const chan = client.advertise({ topic: "commands", encoding: "json", schemaName: "achilles.Commands" });
  client.sendMessage(chan, new TextEncoder().encode(JSON.stringify({ v: 1, commands: { base_motor: 0.05 } })));
  await until("the published command to be accepted", async () =>
    (await view.ask({ cmd: "status" }, "status")).status.commands.accepted === accepted0 + 1);
  check(true, "a command published by the Foxglove client is accepted");

  // unsubscribe: no more data on those subscriptions
  for (const id of subs.keys()) client.unsubscribe(id);
  await until("two frames after unsubscribing", () => view.frames >= 0); // let the requests land
  const n0 = received;
  const f0 = view.frames;
  await view.ask({ cmd: "step", n: 50 }, "step 50");
  await until("the view's frames to reach the next 50 steps", () => view.frame.steps === steps0 + 350);
  await until("three more frames", () => view.frames >= f0 + 3);
  check(received - n0 <= subs.size, `no data after unsubscribing (${received - n0} in flight at most one per channel)`);
  check(statusErrors.length === 0, `no error status from the server (${JSON.stringify(statusErrors)})`);
  client.close();
  // a reset from the view: the next frames are at t = 0 and show no sample of before it
  const reset = await view.ask({ cmd: "reset" }, "reset");
  check(reset.ok && reset.t === 0, "reset through the view");
  await until("a frame at t = 0 after the reset", () => view.frame.t === 0);
  const stale = Object.entries(view.frame.samples).filter(([, m]) => m.t > 0).map(([k]) => k);
  check(stale.length === 0 && Object.keys(view.frame.samples).length > 0,
    `after the reset the frame's samples are all of t = 0 (${Object.keys(view.frame.samples).length} streams; stale: ${stale.join(" ")})`);
  const st = await view.ask({ cmd: "status" }, "status after the Foxglove client left");
  check(st.ok, "the server runs on after the Foxglove client closed");
  view.ws.close();
}

// The ball resting on the world's plane (common.mjs): the frames carry its contact, whose normal
// force must hold the ball up (m·g, an independent reference), and the model message its geoms.
async function testContacts() {
  await withView(WebSocket, ballOnPlane, "ball", async (view, sim) => {
    check(view.model.geoms.map((g) => g.type).join(" ") === "plane sphere" && view.model.geoms[1].size[0] === 0.05,
      "the model message lists the geoms (plane, sphere of radius 0.05)");
    await view.ask({ cmd: "step", n: 3000 }, "step 3000");
    await until("the ball's frame after 3000 steps", () => view.frame && view.frame.steps === 3000);
    const c = view.frame.contacts;
    check(c.length === 1, `one contact (${JSON.stringify(c)})`);
    const [x, y, z, nx, ny, nz, f] = c[0];
    check(Math.abs(x) < 1e-9 && Math.abs(y) < 1e-9 && Math.abs(z) < 1e-3 && Math.abs(nz) > 0.999999,
      `the contact is under the ball on the plane, normal vertical (${[x, y, z, nx, ny, nz].join(", ")})`);
    check(Math.abs(f - 9.81) < 0.01 * 9.81, `its normal force holds the ball up: ${f} N against m·g = 9.81 N`);
  });
}

const a = await startAchilles();
try {
  await testHttp(a.port);
  await testAccess(a.port);
  await testBadInput(a.port);
  await testFoxglove(a.port);
  await testContacts();
} catch (e) {
  console.error(e.stack || e);
  console.error(a.stderr());
  process.exitCode = 1;
} finally {
  const code = await stopAchilles(a);
  if (code !== 0) {
    console.error(`achilles exited with ${code}:\n${a.stderr()}`);
    process.exitCode = 1;
  }
}
process.exit(process.exitCode || 0);
