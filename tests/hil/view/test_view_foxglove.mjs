// tests/hil/view/test_view_foxglove.mjs: the view as Foxglove Studio and Lichtblick meet it
// (docs/view.md section 4), with a client written here (common.mjs foxRaw) so that every byte and
// the order of messages show:
//   - every advertised JSON Schema passes the apps' parseJsonSchema rules (foxglove_schema.mjs,
//     applied to the schemas the server sends) and every message received conforms to its
//     channel's schema;
//   - over 10 s of a realtime run, per channel the timestamps never go back, each frame's batch
//     is in time order and follows its time message (the simulation clock);
//   - in lockstep the time messages follow the steps and stand still while paused; /tf carries
//     each body's quaternion and, past 1 s, the right seconds and nanoseconds; a long step grant
//     still publishes status by wall time;
//   - /robot: one foxglove.SceneUpdate entity per geom, in its body's frame, with its shape and
//     size (capsules as a cylinder and two spheres, a sphere, a plane, a box, a cylinder; the
//     KR5's meshes as closed convex triangle lists); /contacts: a point and an arrow along the
//     normal, 1 cm per newton;
//   - ids that are not whole numbers are refused with a status message; a malformed command
//     published by the client gets a status message saying why;
//   - parameters: get, set and subscribe reach the same sensor parameters as get_param/set_param.
import fs from "node:fs";
import { check, fail, foxRaw, npm, ballOnPlane, startAchilles, stopAchilles, until, viewClient, withView } from "./common.mjs";
import { conforms, parse } from "./foxglove_schema.mjs";

const WebSocket = npm("ws");
const KR5 = "/usr/share/doc/dart/data/urdf/KR5/KR5 sixx R650.urdf";
const ns = (t) => BigInt(Math.round(t * 1e9));
const near = (a, b, tol = 1e-12) => Math.abs(a - b) <= tol;

// the checker must refuse what the apps refuse (else it proves nothing)
function testChecker() {
  const refused = [
    ['{"type":"object"}', "an object without properties"],
    ['{"type":"object","properties":{"v":{"type":["number","null"]}}}', "a list of types"],
    ['{"type":"object","properties":{"v":{"type":"null"}}}', "type null"],
    ['{"type":"object","properties":{"v":{}}}', "no type"],
    ['{"type":"object","properties":{"v":{"type":"array","items":{"type":"array","items":{"type":"number"}}}}}', "an array of arrays"],
    ['{"type":"object","properties":{"o":{"type":"object"}}}', "a nested object without properties"],
    ['{"type":"array","items":{"type":"number"}}', "a root that is not an object"],
  ];
  for (const [schema, what] of refused) check(!parse(schema).ok, `the checker refuses ${what}`);
  const good = parse('{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"}}}},"n":{"type":"integer","minimum":0}}}');
  check(good.ok && good.fields.get("a[].x") === "float64" && good.fields.get("n") === "uint32", "the checker takes a good schema and lists its fields");
  check(conforms(JSON.parse('{"type":"object","properties":{"x":{"type":"number"}}}'), { x: null }).length === 1,
    "a null where the schema says number does not conform");
}

async function advertised(c) {
  await until("serverInfo and advertise", () => c.info && c.channels);
  return new Map(c.channels.map((ch) => [ch.id, { ...ch, schemaJson: JSON.parse(ch.schema) }]));
}

function subscribeAll(c, channels) {
  const subs = new Map();
  let id = 1;
  for (const ch of channels.values()) subs.set(id++, ch);
  c.send({ op: "subscribe", subscriptions: [...subs].map(([sub, ch]) => ({ id: sub, channelId: ch.id })) });
  return subs;
}

// --- a realtime run: schemas, order, monotonic timestamps ---------------------------------------

async function testRealtime() {
  const a = await startAchilles([], "realtime");
  try {
    const c = foxRaw(WebSocket, a.port);
    await c.open;
    const channels = await advertised(c);
    check(c.info.capabilities.includes("time") && c.info.capabilities.includes("parameters") &&
      c.info.capabilities.includes("parametersSubscribe") && c.info.capabilities.includes("clientPublish"),
      `serverInfo capabilities: ${c.info.capabilities.join(", ")}`);
    for (const ch of channels.values()) {
      const r = parse(ch.schema);
      check(r.ok, `${ch.topic} (${ch.schemaName}): its schema passes parseJsonSchema's rules${r.ok ? ` (${r.fields.size} fields)` : `: ${r.errors.join("; ")}`}`);
    }
    const enc = [...channels.values()].find((ch) => ch.topic === "enc/enc_shoulder");
    check(parse(enc.schema).fields.get("values.angle") === "float64", "Plot sees enc/enc_shoulder.values.angle as a float64");
    const subs = subscribeAll(c, channels);
    const from = c.log.length;
    await until("10 s of simulation time in time messages", () => {
      const t = c.log.at(-1);
      return t && t.kind === "time" && t.ns >= 10_000_000_000n;
    }, 60);
    const log = c.log.slice(from);
    let batches = 0, backInBatch = 0, afterTime = 0, data = 0, badTs = 0;
    const last = new Map(), problems = [];
    let batchTime = null, prev = null;
    for (const e of log) {
      if (e.kind === "time") {
        if (batchTime !== null && e.ns < batchTime) fail(`the time message went back: ${batchTime} -> ${e.ns}`);
        batchTime = e.ns, prev = null, batches++;
        continue;
      }
      if (e.kind !== "data") continue;
      data++;
      const ch = subs.get(e.sub);
      if (prev !== null && e.ns < prev) backInBatch++;
      if (batchTime !== null && e.ns > batchTime) afterTime++;
      prev = e.ns;
      const l = last.get(e.sub);
      const sample = ch.topic.includes("/") && ch.schemaName.endsWith("Sample");
      if (l !== undefined && (sample ? e.ns <= l : e.ns < l)) fail(`${ch.topic}: timestamp went back or repeated: ${l} -> ${e.ns}`);
      last.set(e.sub, e.ns);
      const msg = JSON.parse(e.text);
      if (sample && e.ns !== ns(msg.t)) badTs++;
      if (ch.topic === "status" && e.ns !== ns(msg.status.t)) badTs++;
      if (problems.length < 5) problems.push(...conforms(ch.schemaJson, msg).map((p) => `${ch.topic}: ${p}`));
    }
    check(data > 1000 && batches > 300, `${data} messages in ${batches} batches over 10 s`);
    check(last.size === subs.size - 0 || last.size >= subs.size - 1, `every channel sent (${last.size} of ${subs.size}; /contacts only while there are contacts)`);
    check(backInBatch === 0, `within each batch the timestamps never go back (${backInBatch} went back)`);
    check(afterTime === 0, `no message is newer than the time message before it (${afterTime})`);
    check(badTs === 0, `each sample's and status's timestamp is its simulation time in ns (${badTs} differ)`);
    check(problems.length === 0, `every message conforms to its channel's schema (${problems.join("; ")})`);
    c.close();
  } finally {
    if ((await stopAchilles(a)) !== 0) fail(`achilles (realtime) did not exit cleanly:\n${a.stderr()}`);
  }
}

// --- lockstep: time, /tf, /robot, ids, commands, parameters -------------------------------------

// the rotation of a unit quaternion [w, x, y, z] applied to v
function rotate(q, v) {
  const [w, x, y, z] = q;
  const m = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]];
  return m.map((row) => row[0] * v[0] + row[1] * v[1] + row[2] * v[2]);
}

const xyzOf = (p) => [p.x, p.y, p.z];
const quatOf = (o) => [o.w, o.x, o.y, o.z];

// one entity per geom, in its body's frame, with the geom's shape, size and placement
function checkRobot(model, scene) {
  const entities = new Map(scene.entities.map((e) => [e.id, e]));
  check(scene.entities.length === model.geoms.length, `/robot: one entity per geom (${scene.entities.length} for ${model.geoms.length})`);
  for (const g of model.geoms) {
    const e = entities.get(`geom/${g.name}`);
    if (!e) fail(`/robot: no entity geom/${g.name}`);
    const frame = g.body === 0 ? "world" : model.bodies[g.body].name;
    if (e.frame_id !== frame || !e.frame_locked) fail(`${e.id}: in frame ${e.frame_id} (locked ${e.frame_locked}), expected ${frame}`);
    const at = (prim, p) => xyzOf(prim.pose.position).every((v, i) => near(v, p[i], 1e-12)) &&
      quatOf(prim.pose.orientation).every((v, i) => near(v, g.quat[i], 1e-12));
    const size = (prim, s) => xyzOf(prim.size).every((v, i) => near(v, s[i], 1e-12));
    const [r, h] = g.size;
    let ok;
    if (g.type === "sphere") ok = e.spheres.length === 1 && at(e.spheres[0], g.pos) && size(e.spheres[0], [2 * r, 2 * r, 2 * r]);
    else if (g.type === "capsule") {
      const ends = [-1, 1].map((s) => rotate(g.quat, [0, 0, s * h]).map((v, i) => v + g.pos[i]));
      ok = e.cylinders.length === 1 && at(e.cylinders[0], g.pos) && size(e.cylinders[0], [2 * r, 2 * r, 2 * h]) &&
        e.spheres.length === 2 && e.spheres.every((s, k) => at(s, ends[k]) && size(s, [2 * r, 2 * r, 2 * r]));
    } else if (g.type === "cylinder") ok = e.cylinders.length === 1 && at(e.cylinders[0], g.pos) && size(e.cylinders[0], [2 * r, 2 * r, 2 * h]);
    else if (g.type === "box") ok = e.cubes.length === 1 && at(e.cubes[0], g.pos) && size(e.cubes[0], g.size.map((v) => 2 * v));
    else if (g.type === "plane") {
      const top = rotate(g.quat, [0, 0, -0.0005]).map((v, i) => v + g.pos[i]);
      ok = e.cubes.length === 1 && at(e.cubes[0], top) && near(e.cubes[0].size.z, 0.001);
    } else if (g.type === "mesh") ok = checkHull(g, e);
    if (!ok) fail(`${e.id} (${g.type} ${JSON.stringify(g.size)} at ${JSON.stringify(g.pos)}): ${JSON.stringify(e).slice(0, 400)}`);
  }
  check(true, `/robot: every geom's primitives have its shape, size and placement (${[...new Set(model.geoms.map((g) => g.type))].join(", ")})`);
}

// a mesh's hull as a triangle list: its vertices, a closed convex surface (Euler: F = 2V - 4),
// every face wound outwards (its normal away from the centroid)
function checkHull(g, e) {
  if (e.triangles.length !== 1) return false;
  const t = e.triangles[0], p = t.points.map(xyzOf), idx = t.indices;
  const c = [0, 1, 2].map((k) => p.reduce((s, v) => s + v[k], 0) / p.length);
  if (p.length !== g.vertices.length / 3 || idx.length % 3 || idx.length / 3 !== 2 * p.length - 4) return false;
  for (let f = 0; f < idx.length; f += 3) {
    const [a, b, d] = [p[idx[f]], p[idx[f + 1]], p[idx[f + 2]]];
    const u = b.map((v, k) => v - a[k]), w = d.map((v, k) => v - a[k]);
    const n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
    if (n[0] * (a[0] - c[0]) + n[1] * (a[1] - c[1]) + n[2] * (a[2] - c[2]) < 0) return false;
  }
  return true;
}

async function testTimeAndTransforms(a, c, view, subs) {
  const byTopic = (topic) => [...subs].find(([, ch]) => ch.topic === topic)[0];
  const step = async (n) => {
    const steps = view.frame.steps;
    const r = await view.ask({ cmd: "step", n }, `step ${n}`);
    if (!r.ok) fail(`step ${n}: ${JSON.stringify(r)}`);
    await until(`the frames to reach ${steps + n} steps`, () => view.frame.steps === steps + n);
    return view.frame.t;
  };
  const lastTime = () => c.of("time").at(-1)?.ns;
  const t1 = await step(250);
  await until(`a time message at t = ${t1}`, () => lastTime() === ns(t1));
  check(near(t1, 0.25, 1e-9), `after 250 steps the time message says ${lastTime()} ns (the frame's t = ${t1} s)`);
  check((await view.ask({ cmd: "pause" }, "pause")).ok, "paused");
  await view.ask({ cmd: "step", n: 100 }, "step 100 while paused");
  const mark = c.log.length, statuses = view.statuses.length;
  await until("two status messages while paused", () => view.statuses.length >= statuses + 2, 10);
  check(c.of("time", mark).every((e) => e.ns === ns(t1)), `paused: no time message moves on (${c.of("time", mark).length} since)`);
  await view.ask({ cmd: "resume" }, "resume");
  await until("the granted 100 steps after resume", () => view.frame.steps === 350);
  await until("a time message at 0.35 s", () => lastTime() === ns(view.frame.t) && near(view.frame.t, 0.35, 1e-9));
  check(true, "resumed: the time messages follow the steps to 0.35 s");

  const t2 = await step(1000); // t >= 1 s: the seconds and the nanoseconds
  const tfSub = byTopic("/tf");
  const tf = await c.next("data", mark, (e) => e.sub === tfSub && e.ns === ns(t2), `/tf at t = ${t2}`);
  const msg = JSON.parse(tf.text), frame = view.frame;
  const sec = Math.floor(t2), nsec = Number(ns(t2) - BigInt(sec) * 1_000_000_000n);
  check(msg.transforms.every((x) => x.timestamp.sec === sec && x.timestamp.nsec === nsec) && Math.abs(nsec - 350000000) < 10,
    `/tf at t = ${t2} s: timestamps ${sec} s + ${nsec} ns, the message's ${tf.ns} ns`);
  check(frame.t === t2 && msg.transforms.length === frame.bodies.length - 1, "one transform per body, from the frame at the same time");
  let turned = 0;
  msg.transforms.forEach((x, i) => {
    const b = frame.bodies[i + 1]; // [x, y, z, qw, qx, qy, qz]
    const q = [x.rotation.w, x.rotation.x, x.rotation.y, x.rotation.z];
    if (x.child_frame_id !== view.model.bodies[i + 1].name || x.parent_frame_id !== "world") fail(`transform ${i}: frames ${x.parent_frame_id} -> ${x.child_frame_id}`);
    if (!xyzOf(x.translation).every((v, k) => near(v, b[k]))) fail(`${x.child_frame_id}: translation ${JSON.stringify(x.translation)} is not ${b.slice(0, 3)}`);
    if (!q.every((v, k) => near(v, b[3 + k]))) fail(`${x.child_frame_id}: rotation ${JSON.stringify(x.rotation)} is not the body's quaternion ${b.slice(3)}`);
    if (Math.abs(q[0]) < 0.999) turned++;
  });
  check(turned >= 2, `every transform's translation and rotation is its body's pose (${turned} bodies turned)`);

  // /robot: sent at once, and again after a reset (time went back)
  const robotSub = byTopic("/robot");
  const robot = c.data(robotSub);
  check(robot.length === 1, `/robot was sent once so far (${robot.length})`);
  checkRobot(view.model, JSON.parse(robot[0].text));
  const beforeReset = c.log.length;
  await view.ask({ cmd: "reset" }, "reset");
  const again = await c.next("data", beforeReset, (e) => e.sub === robotSub, "/robot again after the reset");
  check(again.ns === 0n, "after a reset /robot is sent again, at t = 0");
}

// a long step grant (unpaced, several status periods) still gets status messages meanwhile
async function testStatusDuringGrant(view) {
  const steps0 = view.frame.steps, n = 50000, seen = view.statuses.length;
  const r = await view.ask({ cmd: "step", n }, `step ${n}`);
  if (!r.ok) fail(`step ${n}: ${JSON.stringify(r)}`);
  await until(`the ${n} granted steps`, () => view.frame.steps === steps0 + n, 120);
  const inside = view.statuses.slice(seen).filter((s) => s.steps > steps0 && s.steps < steps0 + n);
  check(inside.length >= 1, `status messages came during the ${n}-step grant (${inside.length}, steps ${inside.map((s) => s.steps).join(" ")})`);
}

async function testIds(c, channels) {
  const mark = c.log.length;
  const bad = [{ id: 100.5, channelId: 1 }, { id: -1, channelId: 1 }, { id: 1e300, channelId: 1 },
    { id: 101, channelId: 1.5 }, { id: 102, channelId: -1 }, { id: 103, channelId: 1e300 }, { id: "7", channelId: 1 }];
  c.send({ op: "subscribe", subscriptions: bad });
  await until("an error status for each bad subscription", () => c.of("status", mark).length >= bad.length);
  check(c.of("status", mark).every((s) => s.msg.level === 2 && /whole numbers/.test(s.msg.message)),
    `subscriptions whose ids are not whole numbers in [0, 2^32) are refused: ${c.of("status", mark)[0].msg.message}`);
  const m2 = c.log.length;
  c.send({ op: "unsubscribe", subscriptionIds: [-1, 1e300, 2.5] });
  c.send({ op: "advertise", channels: [{ id: -1, topic: "commands", encoding: "json", schemaName: "x" },
    { id: 1e300, topic: "commands", encoding: "json", schemaName: "x" }, { id: 3.5, topic: "commands", encoding: "json", schemaName: "x" }] });
  c.send({ op: "unadvertise", channelIds: [-1, 1e300, 0.5] });
  await until("six more error statuses", () => c.of("status", m2).length >= 6);
  check(c.of("status", m2).slice(0, 3).every((s) => /no such subscription/.test(s.msg.message)) &&
    c.of("status", m2).slice(3, 6).every((s) => /whole-number id/.test(s.msg.message)),
    "unsubscribe and advertise with such ids are refused with a status; unadvertise ignores them");
  return mark;
}

async function testCommands(c, view) {
  const mark = c.log.length;
  const before = (await view.ask({ cmd: "status" }, "status")).status.commands;
  c.send({ op: "advertise", channels: [{ id: 9, topic: "commands", encoding: "json", schemaName: "achilles.Commands" }] });
  c.publish(9, "nonsense");
  const s1 = await c.next("status", mark, () => true, "a status about the malformed command");
  check(s1.msg.level === 2 && /^commands: /.test(s1.msg.message) && /JSON/.test(s1.msg.message),
    `a malformed command message is answered: ${JSON.stringify(s1.msg)}`);
  const m2 = c.log.length;
  c.publish(9, JSON.stringify({ v: 1, commands: { no_such_motor: 1 } }));
  const s2 = await c.next("status", m2, () => true, "a status about the refused entry");
  check(s2.msg.level === 1 && /no_such_motor/.test(s2.msg.message), `an unknown actuator is answered with a warning: ${s2.msg.message}`);
  const m3 = c.log.length;
  c.publish(9, JSON.stringify({ v: 1, commands: { base_motor: 0.01 } }));
  const after = await until("the good command to count", async () => {
    const st = (await view.ask({ cmd: "status" }, "status")).status.commands;
    return st.accepted === before.accepted + 1 && st;
  });
  check(after.rejected_malformed === before.rejected_malformed + 1 && after.rejected_unknown === before.rejected_unknown + 1,
    "the status counts the malformed message and the unknown entry");
  check(c.of("status", m3).length === 0, "a good command gets no status message");
}

async function testParameters(c, view) {
  const mark = c.log.length;
  c.send({ op: "getParameters", parameterNames: [], id: "all" });
  const all = (await c.next("parameterValues", mark, (e) => e.msg.id === "all", "all parameters")).msg.parameters;
  const names = all.map((p) => p.name);
  check(names.includes("enc_shoulder.noise.white.sigma") && names.includes("imu_wrist.gyro.noise.white.density") &&
    names.includes("enc_shoulder.drop_probability") && !names.includes("enc_shoulder.resolution"),
    `getParameters lists the sensors' tunable parameters (${all.length}, e.g. ${names.slice(0, 3).join(", ")})`);
  check(all.every((p) => p.type === "float64" && typeof p.value === "number"), "each as a float64 number");
  // the same parameters get_param reads (the page's Get), with the same values
  let same = 0;
  for (const p of all) {
    const dot = p.name.indexOf(".");
    const r = await view.ask({ cmd: "get_param", sensor: p.name.slice(0, dot), path: p.name.slice(dot + 1) }, `get_param ${p.name}`);
    if (!r.ok || r.value !== p.value) fail(`${p.name}: Foxglove says ${p.value}, get_param ${JSON.stringify(r)}`);
    same++;
  }
  check(same === all.length, `every one of the ${same} is what get_param reads`);
  const m2 = c.log.length;
  c.send({ op: "subscribeParameterUpdates", parameterNames: ["enc_shoulder.noise.white.sigma"] });
  await c.next("parameterValues", m2, (e) => e.msg.parameters.some((p) => p.name === "enc_shoulder.noise.white.sigma"), "the subscribed value at once");
  const m3 = c.log.length;
  c.send({ op: "setParameters", parameters: [{ name: "enc_shoulder.noise.white.sigma", value: 0.003, type: "float64" }], id: "set1" });
  const set = await c.next("parameterValues", m3, (e) => e.msg.id === "set1", "the setParameters reply");
  check(set.msg.parameters[0].value === 0.003 &&
    (await view.ask({ cmd: "get_param", sensor: "enc_shoulder", path: "noise.white.sigma" }, "get_param")).value === 0.003,
    "setParameters changed the encoder's noise (get_param reads 0.003)");
  const m4 = c.log.length;
  await view.ask({ cmd: "set_param", sensor: "enc_shoulder", path: "noise.white.sigma", value: 0.004 }, "set_param from the view");
  await c.next("parameterValues", m4, (e) => !e.msg.id && e.msg.parameters.some((p) => p.value === 0.004), "an update after set_param elsewhere");
  check(true, "a subscriber hears of a change made through the control requests");
  const m5 = c.log.length;
  c.send({ op: "setParameters", parameters: [{ name: "enc_shoulder.noise.white.sigma", value: -1 }], id: "bad" });
  c.send({ op: "setParameters", parameters: [{ name: "enc_shoulder.no_such", value: 1 }] });
  c.send({ op: "getParameters", parameterNames: ["nope"] });
  await until("three error statuses", () => c.of("status", m5).length >= 3);
  const errs = c.of("status", m5).map((s) => s.msg.message);
  check(/must be/.test(errs[0]) && /no parameter/.test(errs[1]) && /no parameter/.test(errs[2]),
    `bad values and names are refused with a status (${errs.join(" | ")})`);
  check((await view.ask({ cmd: "get_param", sensor: "enc_shoulder", path: "noise.white.sigma" }, "get_param")).value === 0.004,
    "a refused value changed nothing");
}

// a dropped sample (drop_probability 1): valid false, and its values left out rather than null
// (a null where the schema says number would not conform)
async function testDropped(c, view, subs) {
  const sub = [...subs].find(([, ch]) => ch.topic === "enc/enc_elbow")[0];
  const schema = subs.get(sub).schemaJson;
  c.send({ op: "setParameters", parameters: [{ name: "enc_elbow.drop_probability", value: 1 }] });
  await until("drop_probability 1", async () => (await view.ask({ cmd: "get_param", sensor: "enc_elbow", path: "drop_probability" }, "get_param")).value === 1);
  const mark = c.log.length, steps = view.frame.steps;
  await view.ask({ cmd: "step", n: 20 }, "step 20");
  await until("20 steps", () => view.frame.steps === steps + 20);
  const e = await c.next("data", mark, (d) => d.sub === sub && JSON.parse(d.text).valid === false, "a dropped enc_elbow sample");
  const msg = JSON.parse(e.text);
  const zmq = (await view.ask({ cmd: "latest" }, "latest")).samples["enc/enc_elbow"];
  check(Object.keys(msg.values).length === 0 && Object.values(zmq.values).every((v) => v === null) && conforms(schema, msg).length === 0,
    `a dropped sample: ZeroMQ's values are null (${JSON.stringify(zmq.values)}), Foxglove's left out (${JSON.stringify(msg.values)}), conforming to the schema`);
  c.send({ op: "setParameters", parameters: [{ name: "enc_elbow.drop_probability", value: 0 }] });
}

async function testLockstep() {
  const a = await startAchilles(["--status-period", "0.05"]);
  try {
    const view = viewClient(WebSocket, a.port);
    await view.open;
    await until("the model and a frame", () => view.model && view.frame);
    const c = foxRaw(WebSocket, a.port);
    await c.open;
    const channels = await advertised(c);
    const subs = subscribeAll(c, channels);
    await testTimeAndTransforms(a, c, view, subs);
    await testIds(c, channels);
    await testCommands(c, view);
    await testParameters(c, view);
    await testDropped(c, view, subs);
    await testStatusDuringGrant(view);
    check(!c.closed, "the Foxglove connection stayed open through all of it");
    c.close();
    view.ws.close();
  } finally {
    if ((await stopAchilles(a)) !== 0) fail(`achilles (lockstep) did not exit cleanly:\n${a.stderr()}`);
  }
}

// --- the ball on the plane: /contacts; the KR5: meshes in /robot -------------------------------


async function testContacts() {
  await withView(WebSocket, ballOnPlane, "ball", async (view, sim) => {
    await view.ask({ cmd: "step", n: 3000 }, "step 3000");
    await until("3000 steps", () => view.frame && view.frame.steps === 3000);
    const c = foxRaw(WebSocket, sim.port);
    await c.open;
    const channels = await advertised(c);
    const contacts = [...channels.values()].find((ch) => ch.topic === "/contacts");
    check(contacts.schemaName === "foxglove.SceneUpdate", "/contacts is a foxglove.SceneUpdate");
    c.send({ op: "subscribe", subscriptions: [{ id: 1, channelId: contacts.id }] });
    const m = JSON.parse((await c.next("data", 0, (e) => e.sub === 1, "a /contacts message")).text);
    const e = m.entities[0], [x, y, z, nx, ny, nz, f] = view.frame.contacts[0];
    check(m.entities.length === 1 && e.frame_id === "world" && e.spheres.length === 1 && e.arrows.length === 1,
      "one contact: a sphere and an arrow in the world frame");
    check(xyzOf(e.spheres[0].pose.position).every((v, i) => near(v, [x, y, z][i])), "the sphere is at the contact point");
    const dir = rotate(quatOf(e.arrows[0].pose.orientation), [1, 0, 0]);
    check(dir.every((v, i) => near(v, [nx, ny, nz][i], 1e-9)), `the arrow points along the normal (${dir.map((v) => v.toFixed(6))})`);
    const len = e.arrows[0].shaft_length + e.arrows[0].head_length;
    check(near(len, 0.01 * f, 1e-9) && Math.abs(len - 0.0981) < 0.001, `its length is 1 cm per newton (${len.toFixed(4)} m for ${f.toFixed(3)} N)`);
    c.close();
  });
}

// a box and a cylinder, turned in their body (the club arm has capsules, a sphere and a plane)
const shapes = {
  name: "shapes", timestep: 0.001, gravity: [0, 0, 0],
  bodies: [{ name: "block", parent: "world", pos: [0, 0, 0.3], joint: { name: "slide", type: "slide", axis: [1, 0, 0] },
    inertial: { mass: 1.0, com: [0, 0, 0], inertia: [0.001, 0.001, 0.001, 0, 0, 0] } }],
  geoms: [{ name: "brick", body: "block", type: "box", size: [0.05, 0.03, 0.02], pos: [0.1, 0, 0], quat: [0.9238795325112867, 0, 0, 0.3826834323650898] },
    { name: "can", body: "block", type: "cylinder", size: [0.02, 0.04], pos: [-0.1, 0.02, 0], quat: [0.7071067811865476, 0.7071067811865476, 0, 0] }],
};

async function testShapes() {
  await withView(WebSocket, shapes, "shapes", async (view, sim) => {
    const c = foxRaw(WebSocket, sim.port);
    await c.open;
    const channels = await advertised(c);
    const robot = [...channels.values()].find((ch) => ch.topic === "/robot");
    c.send({ op: "subscribe", subscriptions: [{ id: 1, channelId: robot.id }] });
    checkRobot(view.model, JSON.parse((await c.next("data", 0, (e) => e.sub === 1, "the shapes' /robot")).text));
    c.close();
  });
}

async function testMeshes() {
  if (!fs.existsSync(KR5)) {
    if (process.env.CI === "true") fail(`${KR5} is missing (Debian package dart-doc)`);
    console.log(`skipped: ${KR5} is missing (Debian package dart-doc)`);
    return;
  }
  await withView(WebSocket, KR5, "KR5", async (view, sim) => {
    const meshes = view.model.geoms.filter((g) => g.type === "mesh");
    check(meshes.length >= 6 && meshes.every((g) => g.vertices.length > 0 && g.faces.length > 0),
      `the model message carries the KR5's ${meshes.length} hulls (${meshes.map((g) => g.vertices.length / 3).join(", ")} vertices)`);
    const c = foxRaw(WebSocket, sim.port);
    await c.open;
    const channels = await advertised(c);
    const robot = [...channels.values()].find((ch) => ch.topic === "/robot");
    c.send({ op: "subscribe", subscriptions: [{ id: 1, channelId: robot.id }] });
    const scene = JSON.parse((await c.next("data", 0, (e) => e.sub === 1, "the KR5's /robot")).text);
    checkRobot(view.model, scene);
    check(conforms(JSON.parse(robot.schema), scene).length === 0, "the KR5's /robot conforms to its schema");
    c.close();
  });
}

try {
  testChecker();
  await testLockstep();
  await testContacts();
  await testShapes();
  await testMeshes();
  await testRealtime();
} catch (e) {
  console.error(e.stack || e);
  process.exitCode = 1;
}
process.exit(process.exitCode || 0);
