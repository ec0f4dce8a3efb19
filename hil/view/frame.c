/* hil/view/frame.c: the view's messages (docs/view.md), written on the server thread from a
 * frame the loop copied: "model" once per connection, "frame" at the display rate, "status". */
#include "hil/view/view_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hil/error.h"


void view__mat_quat(double q[4], const double *r) {
  /* the largest of the four candidates keeps the division well conditioned */
  const double tr = r[0] + r[4] + r[8];
  if (tr > 0) {
    const double s = 2 * sqrt(1 + tr);
    q[0] = 0.25 * s, q[1] = (r[7] - r[5]) / s, q[2] = (r[2] - r[6]) / s, q[3] = (r[3] - r[1]) / s;
  } else if (r[0] > r[4] && r[0] > r[8]) {
    const double s = 2 * sqrt(1 + r[0] - r[4] - r[8]);
    q[0] = (r[7] - r[5]) / s, q[1] = 0.25 * s, q[2] = (r[1] + r[3]) / s, q[3] = (r[2] + r[6]) / s;
  } else if (r[4] > r[8]) {
    const double s = 2 * sqrt(1 + r[4] - r[0] - r[8]);
    q[0] = (r[2] - r[6]) / s, q[1] = (r[1] + r[3]) / s, q[2] = 0.25 * s, q[3] = (r[5] + r[7]) / s;
  } else {
    const double s = 2 * sqrt(1 + r[8] - r[0] - r[4]);
    q[0] = (r[3] - r[1]) / s, q[1] = (r[2] + r[6]) / s, q[2] = (r[5] + r[7]) / s, q[3] = 0.25 * s;
  }
}

uint64_t view__ns(double t) {
  return t > 0 ? (uint64_t)(t * 1e9 + 0.5) : 0;
}

static void numbers(hil_jw *w, const double *v, int n) {
  hil_jw_begin_array(w);
  for (int i = 0; i < n; i++) {
    hil_jw_number(w, v[i]);
  }
  hil_jw_end_array(w);
}

int view__encode_stream(char *out, size_t cap, const view_shared *sh, const view_frame *f, int k) {
  const int i = k % sh->nsensor;
  if (!f->has[i]) {
    return -1;
  }
  if (sh->replay) { /* the replay's own encoder: the text its ZeroMQ messages carry */
    const int truth = k >= sh->nsensor;
    return truth && !f->rsmp[i].has_truth
               ? -1
               : hil_replay_encode_json(out, cap, &sh->replay->sensor[i], &f->rsmp[i], truth);
  }
  return hil_msg_encode_sample_form(out, cap, &sh->forms[k], &f->smp[i]);
}

int view__encode_frame(char *out, size_t cap, const view_shared *sh, const view_frame *f) {
  const sim_model *m = sh->m; /* NULL in a replay: no joints, bodies or contacts */
  const int nq = m ? m->nq : 0, nbody = m ? m->nbody : 0;
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, "frame");
  hil_jw_key(&w, "seq");
  hil_jw_uint(&w, f->seq);
  hil_jw_key(&w, "t");
  hil_jw_number(&w, f->t);
  hil_jw_key(&w, "wall_time");
  hil_jw_number(&w, f->wall);
  hil_jw_key(&w, "steps");
  hil_jw_uint(&w, f->steps);
  hil_jw_key(&w, "paused");
  hil_jw_bool(&w, f->paused);
  hil_jw_key(&w, "qpos");
  numbers(&w, f->qpos, nq);
  hil_jw_key(&w, "bodies"); /* [x, y, z, qw, qx, qy, qz] per body, the world first */
  hil_jw_begin_array(&w);
  for (int b = 0; b < nbody; b++) {
    double pose[7];
    memcpy(pose, f->xpos + 3 * b, 3 * sizeof(double));
    view__mat_quat(pose + 3, f->xmat + 9 * b);
    numbers(&w, pose, 7);
  }
  hil_jw_end_array(&w);
  hil_jw_key(&w, "contacts"); /* [x, y, z, nx, ny, nz, force] */
  hil_jw_begin_array(&w);
  for (int c = 0; c < f->ncon; c++) {
    numbers(&w, f->con[c], 7);
  }
  hil_jw_end_array(&w);
  hil_jw_key(&w, "samples");
  hil_jw_begin_object(&w);
  char msg[HIL_MSG_SAMPLE_MAX];
  for (int k = 0; k < 2 * sh->nsensor; k++) {
    const int len = view__encode_stream(msg, sizeof msg, sh, f, k);
    if (len > 0) {
      hil_jw_key(&w, sh->topics[k]);
      hil_jw_raw(&w, msg, (size_t)len);
    }
  }
  hil_jw_end_object(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* a replay's progress: the "replay" object of docs/replay.md's status message */
static void write_replay(hil_jw *w, const view_shared *sh, const view_frame *f) {
  hil_jw_key(w, "replay");
  hil_jw_begin_object(w);
  hil_jw_key(w, "file");
  hil_jw_string(w, sh->replay->path);
  hil_jw_key(w, "played");
  hil_jw_uint(w, f->rep.played);
  hil_jw_key(w, "total");
  hil_jw_uint(w, (uint64_t)sh->replay->n);
  hil_jw_key(w, "pass");
  hil_jw_uint(w, (uint64_t)(f->rep.passes > 0 ? f->rep.passes : 1));
  hil_jw_key(w, "instants");
  hil_jw_uint(w, f->rep.instants);
  hil_jw_key(w, "messages");
  hil_jw_uint(w, f->rep.messages);
  hil_jw_key(w, "send_failed");
  hil_jw_uint(w, f->rep.send_failed);
  hil_jw_key(w, "ctl_requests");
  hil_jw_uint(w, f->rep.ctl_requests);
  hil_jw_key(w, "cmd_messages");
  hil_jw_uint(w, f->rep.cmd_messages);
  hil_jw_key(w, "finished");
  hil_jw_bool(w, f->finished);
  hil_jw_end_object(w);
}

int view__encode_status(char *out, size_t cap, const view_shared *sh, const view_frame *f) {
  hil_jw w;
  hil_jw_init(&w, out, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, "status");
  hil_jw_key(&w, "status");
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_msg_write_status_fields(&w, &f->status);
  if (sh->replay) {
    write_replay(&w, sh, f);
  }
  hil_jw_end_object(&w);
  hil_jw_key(&w, "transports"); /* each other transport's console fragment */
  hil_jw_begin_array(&w);
  for (const char *p = f->transports; *p;) {
    const char *nl = strchr(p, '\n');
    const size_t n = nl ? (size_t)(nl - p) : strlen(p);
    char line[VIEW_TRANSPORTS_MAX];
    memcpy(line, p, n);
    line[n] = '\0';
    hil_jw_string(&w, line);
    p += n + (nl ? 1 : 0);
  }
  hil_jw_end_array(&w);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

static const char *geom_type_name(sim_geom_type t) {
  switch (t) {
  case SIM_GEOM_PLANE:
    return "plane";
  case SIM_GEOM_SPHERE:
    return "sphere";
  case SIM_GEOM_CAPSULE:
    return "capsule";
  case SIM_GEOM_CYLINDER:
    return "cylinder";
  case SIM_GEOM_MESH:
    return "mesh";
  case SIM_GEOM_BOX:
  default:
    return "box";
  }
}

static const char *joint_type_name(sim_joint_type t) {
  return t == SIM_JOINT_HINGE ? "hinge" : t == SIM_JOINT_SLIDE ? "slide" : "fixed";
}

static void write_bodies(hil_jw *w, const sim_model *m) {
  hil_jw_key(w, "bodies");
  hil_jw_begin_array(w);
  for (int b = 0; b < m->nbody; b++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, b == 0 ? "world" : m->bodies[b].name);
    hil_jw_key(w, "parent");
    hil_jw_number(w, m->bodies[b].parent);
    hil_jw_key(w, "pos"); /* placement in the parent's frame at q = 0 */
    numbers(w, m->bodies[b].pos, 3);
    hil_jw_key(w, "quat");
    numbers(w, m->bodies[b].quat, 4);
    hil_jw_key(w, "com");
    numbers(w, m->bodies[b].com, 3);
    hil_jw_key(w, "mass");
    hil_jw_number(w, m->bodies[b].mass);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

static void write_joints(hil_jw *w, const sim_model *m) {
  hil_jw_key(w, "joints");
  hil_jw_begin_array(w);
  for (int j = 0; j < m->njnt; j++) {
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, m->joints[j].name);
    hil_jw_key(w, "type");
    hil_jw_string(w, joint_type_name(m->joints[j].type));
    hil_jw_key(w, "body");
    hil_jw_number(w, m->joints[j].body);
    hil_jw_key(w, "axis");
    numbers(w, m->joints[j].axis, 3);
    hil_jw_key(w, "qposadr");
    hil_jw_number(w, m->joints[j].qposadr);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

/* a mesh geom's hull for drawing: its vertices (flat x, y, z, in the geom's frame) and its
 * triangles (flat vertex indices, counter-clockwise seen from outside) */
static void write_hull(hil_jw *w, const sim_model *m, const sim_geom *geom, const view_mesh *h) {
  hil_jw_key(w, "vertices");
  numbers(w, m->hull_vert + 3 * geom->hull_adr, 3 * geom->hull_nvert);
  hil_jw_key(w, "faces");
  hil_jw_begin_array(w);
  for (int i = 0; h && i < 3 * h->ntri; i++) {
    hil_jw_uint(w, (uint64_t)h->tri[i]);
  }
  hil_jw_end_array(w);
}

static void write_geoms(hil_jw *w, const sim_model *m, const view_mesh *meshes) {
  hil_jw_key(w, "geoms");
  hil_jw_begin_array(w);
  for (int g = 0; g < m->ngeom; g++) {
    const sim_geom *geom = &m->geoms[g];
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, geom->name);
    hil_jw_key(w, "type");
    hil_jw_string(w, geom_type_name(geom->type));
    hil_jw_key(w, "body");
    hil_jw_number(w, geom->body);
    hil_jw_key(w, "pos");
    numbers(w, geom->pos, 3);
    hil_jw_key(w, "quat");
    numbers(w, geom->quat, 4);
    hil_jw_key(w, "size");
    numbers(w, geom->size, 3);
    if (geom->type == SIM_GEOM_MESH) {
      write_hull(w, m, geom, meshes ? &meshes[g] : NULL);
    }
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

/* A replay's streams: what the log's header says of each sensor (no joint: a log names none). */
static void write_replay_streams(hil_jw *w, const view_shared *sh) {
  hil_jw_key(w, "sensors");
  hil_jw_begin_array(w);
  for (int i = 0; i < sh->nsensor; i++) {
    const hil_replay_sensor *s = &sh->replay->sensor[i];
    if (!s->selected) {
      continue;
    }
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, s->name);
    hil_jw_key(w, "type");
    hil_jw_string(w, s->type);
    hil_jw_key(w, "topic");
    hil_jw_string(w, sh->topics[i]);
    hil_jw_key(w, "truth_topic");
    hil_jw_string(w, sh->topics[sh->nsensor + i]);
    hil_jw_key(w, "channels");
    hil_jw_begin_array(w);
    for (int c = 0; c < s->nch; c++) {
      hil_jw_string(w, s->channel[c]);
    }
    hil_jw_end_array(w);
    hil_jw_key(w, "units");
    hil_jw_begin_array(w);
    for (int c = 0; c < s->nch; c++) {
      hil_jw_string(w, s->unit[c]);
    }
    hil_jw_end_array(w);
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

/* Streams: topic, sensor, type, channels, units and what the sensor reads (joint or body). */
static void write_streams(hil_jw *w, const view_shared *sh) {
  if (sh->replay) {
    write_replay_streams(w, sh);
    return;
  }
  hil_jw_key(w, "sensors");
  hil_jw_begin_array(w);
  for (int i = 0; i < sh->nsensor; i++) {
    const sens_sensor *s = sens_set_sensor(sh->sensors, i);
    hil_jw_begin_object(w);
    hil_jw_key(w, "name");
    hil_jw_string(w, s->name);
    hil_jw_key(w, "type");
    hil_jw_string(w, sens_type_name(s->type));
    hil_jw_key(w, "topic");
    hil_jw_string(w, sh->topics[i]);
    hil_jw_key(w, "truth_topic");
    hil_jw_string(w, sh->topics[sh->nsensor + i]);
    hil_jw_key(w, "channels");
    hil_jw_begin_array(w);
    for (int c = 0; c < s->nch; c++) {
      hil_jw_string(w, s->channel[c]);
    }
    hil_jw_end_array(w);
    hil_jw_key(w, "units");
    hil_jw_begin_array(w);
    for (int c = 0; c < s->nch; c++) {
      hil_jw_string(w, hil_msg_unit(sh->m, s, c));
    }
    hil_jw_end_array(w);
    if (s->type == SENS_ENCODER || s->type == SENS_TORQUE) {
      hil_jw_key(w, "joint");
      hil_jw_string(w, sh->m->joints[s->type == SENS_ENCODER ? s->u.enc.joint : s->u.trq.joint]
                           .name);
    }
    hil_jw_end_object(w);
  }
  hil_jw_end_array(w);
}

static int write_model(char *buf, size_t cap, const view_shared *sh) {
  hil_jw w;
  hil_jw_init(&w, buf, cap);
  hil_jw_begin_object(&w);
  hil_jw_key(&w, "type");
  hil_jw_string(&w, "model");
  hil_jw_key(&w, "v");
  hil_jw_uint(&w, HIL_MSG_VERSION);
  hil_jw_key(&w, "name");
  hil_jw_string(&w, sh->m ? sh->m->name : sh->replay->robot);
  hil_jw_key(&w, "timestep");
  hil_jw_number(&w, sh->m ? sh->m->opt.timestep : sh->replay->period);
  hil_jw_key(&w, "display_rate_hz");
  hil_jw_number(&w, sh->opt.rate_hz);
  hil_jw_key(&w, "window_s");
  hil_jw_number(&w, sh->opt.window_s);
  hil_jw_key(&w, "max_message_bytes");
  hil_jw_uint(&w, sh->opt.max_message_bytes);
  if (sh->m) {
    write_bodies(&w, sh->m);
    write_joints(&w, sh->m);
    write_geoms(&w, sh->m, sh->meshes);
  } else { /* a replay: a log holds no robot model, so nothing to draw */
    static const char *const none[] = {"bodies", "joints", "geoms"};
    for (int k = 0; k < 3; k++) {
      hil_jw_key(&w, none[k]);
      hil_jw_begin_array(&w);
      hil_jw_end_array(&w);
    }
    hil_jw_key(&w, "replay");
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "file");
    hil_jw_string(&w, sh->replay->path);
    hil_jw_key(&w, "total");
    hil_jw_uint(&w, (uint64_t)sh->replay->n);
    hil_jw_key(&w, "t_first");
    hil_jw_number(&w, sh->replay->t_first);
    hil_jw_key(&w, "t_last");
    hil_jw_number(&w, sh->replay->t_last);
    hil_jw_end_object(&w);
  }
  write_streams(&w, sh);
  hil_jw_end_object(&w);
  return hil_jw_finish(&w);
}

/* The model message grows with the meshes' hulls: written into a buffer doubled until it fits. */
int view__build_model(view_shared *sh) {
  for (size_t cap = VIEW_MESSAGE_MAX; cap <= ((size_t)1 << 30); cap *= 2) {
    char *buf = malloc(cap);
    const int len = buf ? write_model(buf, cap, sh) : -1;
    if (len >= 0) {
      sh->model_json = buf;
      sh->model_len = len;
      return HIL_OK;
    }
    free(buf);
    if (!buf) {
      break;
    }
  }
  return HIL_ENOMEM;
}

int view__replay_answer(char *out, size_t cap, const view_shared *sh, const view_frame *f,
                        const char *text, size_t len) {
  char err[512];
  hil_ctl_request q;
  if (hil_msg_decode_control(&q, text, len, err, sizeof err) != HIL_OK) {
    return hil_msg_encode_error(out, cap, err);
  }
  if (q.op != HIL_CTL_STATUS && q.op != HIL_CTL_LATEST) {
    snprintf(err, sizeof err,
             "replay: %s is not available in a replay (the view of a replay only watches: "
             "status and latest are answered)",
             hil_ctl_op_name(q.op));
    return hil_msg_encode_error(out, cap, err);
  }
  hil_jw w;
  hil_jw_init(&w, out, cap);
  if (q.op == HIL_CTL_LATEST) {
    hil_msg_begin_latest(&w, f ? f->t : 0, f ? f->steps : 0);
    char msg[HIL_MSG_SAMPLE_MAX];
    for (int k = 0; f && k < 2 * sh->nsensor; k++) {
      const int n = view__encode_stream(msg, sizeof msg, sh, f, k);
      if (n > 0) {
        hil_msg_latest_sample(&w, sh->topics[k], msg, n);
      }
    }
    hil_msg_end_latest(&w);
  } else {
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "ok");
    hil_jw_bool(&w, 1);
    hil_jw_key(&w, "status");
    hil_jw_begin_object(&w);
    hil_jw_key(&w, "v");
    hil_jw_uint(&w, HIL_MSG_VERSION);
    static const view_frame none; /* before the first instant: zeros */
    const view_frame *g = f ? f : &none;
    hil_msg_write_status_fields(&w, &g->status);
    write_replay(&w, sh, g);
    hil_jw_end_object(&w);
    hil_jw_end_object(&w);
  }
  const int n = hil_jw_finish(&w);
  return n >= 0 ? n : hil_msg_encode_error(out, cap, "reply too large");
}
