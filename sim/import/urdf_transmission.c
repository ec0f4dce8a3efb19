/* sim/import/urdf_transmission.c: ROS <transmission> elements into native actuators.
 *
 * URDF itself has no actuators; ros_control's transmissions say which joints are driven and
 * how (docs/import.md). Both layouts are read: the current one (<type> element, a
 * <hardwareInterface> under <joint> or <actuator>, <mechanicalReduction> under <actuator>) and
 * the older one (a type attribute, <mechanicalReduction> under <transmission>). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/import/urdf.h"

/* the text content of el with surrounding white space removed, into out ("" when none) */
static void text_of(const xmlNode *el, char *out, size_t out_sz) {
  out[0] = '\0';
  xmlChar *t = el ? xmlNodeGetContent(el) : NULL;
  if (!t) {
    return;
  }
  const char *s = (const char *)t;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
    s++;
  }
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r')) {
    n--;
  }
  snprintf(out, out_sz, "%.*s", (int)n, s);
  xmlFree(t);
}

/* the hardware interface named under the joint or the actuator element ("" when none) */
static void interface_of(const xmlNode *joint, const xmlNode *actuator, char *out, size_t sz) {
  text_of(imp__child(joint, "hardwareInterface"), out, sz);
  if (!out[0] && actuator) {
    text_of(imp__child(actuator, "hardwareInterface"), out, sz);
  }
}

/* mechanicalReduction under the actuator, or (older layout) the transmission; 1 when absent */
static int reduction_of(urdf *u, const xmlNode *tr, const xmlNode *actuator, double *gear) {
  const xmlNode *r = actuator ? imp__child(actuator, "mechanicalReduction") : NULL;
  r = r ? r : imp__child(tr, "mechanicalReduction");
  char text[64];
  text_of(r, text, sizeof text);
  *gear = 1;
  return text[0] && imp__numbers(u->c, r, "mechanicalReduction", text, gear, 1, 1) < 0 ? -1 : 0;
}

/* 1 when the transmission's type (element or attribute) is a SimpleTransmission */
static int simple_type(const xmlNode *tr) {
  char text[128];
  text_of(imp__child(tr, "type"), text, sizeof text);
  const char *type = text[0] ? text : imp__attr(tr, "type");
  const char *tail = type ? strrchr(type, '/') : NULL;
  return type && strcmp(tail ? tail + 1 : type, "SimpleTransmission") == 0;
}

/* the joint's <limit effort>, 0 when absent */
static int effort_of(urdf *u, const xmlNode *joint, double *effort) {
  const xmlNode *lim = imp__child(joint, "limit");
  const char *e = lim ? imp__attr(lim, "effort") : NULL;
  *effort = 0;
  return e && imp__numbers(u->c, lim, "effort", e, effort, 1, 1) < 0 ? -1 : 0;
}

/* one transmission: 0 (converted or reported), -1 on an error */
static int convert_one(urdf *u, const xmlNode *tr) {
  const char *tname = imp__attr(tr, "name");
  const xmlNode *jel = imp__child(tr, "joint"), *ael = imp__child(tr, "actuator");
  const char *jname = jel ? imp__attr(jel, "name") : NULL;
  if (!simple_type(tr)) {
    return imp__report(u->c, tr, "<transmission> not converted: only SimpleTransmission "
                                 "(one joint, one actuator) makes an actuator");
  }
  if (!jname) {
    return imp__fail(u->c, tr, "<transmission>: needs <joint name>");
  }
  const int j = sim_name_index_find(&u->joint_ix, jname);
  if (j < 0) {
    return imp__fail(u->c, jel, "<transmission>: no joint named \"%s\"", jname);
  }
  const char *type = imp__attr(u->joints[j], "type");
  if (!type || !(strcmp(type, "revolute") == 0 || strcmp(type, "continuous") == 0 ||
                 strcmp(type, "prismatic") == 0)) {
    return imp__report(u->c, tr, "<transmission> not converted: joint \"%s\" is %s (an "
                                 "actuator needs a revolute, continuous or prismatic joint)",
                       jname, type ? type : "of no type");
  }
  char iface[128];
  interface_of(jel, ael, iface, sizeof iface);
  if (iface[0] && !strstr(iface, "EffortJointInterface")) {
    return imp__report(u->c, tr, "<transmission> not converted: %s needs gains URDF does not "
                                 "give (add a position_servo or velocity_servo to the converted "
                                 "JSON)", iface);
  }
  double gear, effort;
  if (reduction_of(u, tr, ael, &gear) || effort_of(u, u->joints[j], &effort)) {
    return -1;
  }
  if (!(gear > 0)) {
    return imp__report(u->c, tr, "<transmission> not converted: mechanicalReduction %g (a "
                                 "native gear is > 0; flip the joint's axis instead)", gear);
  }
  if (u->driven[j]) {
    return imp__fail(u->c, tr, "<transmission>: joint \"%s\" is driven by a transmission "
                               "already", jname);
  }
  u->driven[j] = 1;
  const char *aname = ael && imp__attr(ael, "name") ? imp__attr(ael, "name") : tname;
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "name", aname ? aname : jname);
  cJSON_AddStringToObject(a, "joint", jname);
  cJSON_AddStringToObject(a, "type", "motor");
  if (gear != 1) {
    cJSON_AddNumberToObject(a, "gear", gear);
  }
  if (effort > 0) { /* the joint's torque or force at most, whatever the command */
    cJSON_AddNumberToObject(a, "force_limit", effort);
  }
  cJSON_AddItemToArray(u->actuators, a);
  return 0;
}

int urdf__transmissions(urdf *u) {
  for (int i = 0; i < u->ntransmissions; i++) {
    if (convert_one(u, u->transmissions[i]) != 0) {
      return -1;
    }
  }
  return 0;
}
