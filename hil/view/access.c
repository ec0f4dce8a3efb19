/* hil/view/access.c: who may reach the view (docs/view.md, section 7). The view has no login, so
 * the server refuses, before it reads a request, what a web page elsewhere could send through a
 * user's browser:
 *   - a Host header that names none of the names the server was bound for: a page on
 *     evil.example whose name was rebound to 127.0.0.1 (DNS rebinding) sends Host: evil.example
 *     and, being same-origin with itself, a matching Origin;
 *   - a WebSocket whose Origin is a foreign page's (browsers let any page open a WebSocket to
 *     127.0.0.1 and say which page in Origin).
 * Pure functions of the header values, so the rules are tested without a socket. */
#include "hil/view/view_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "hil/error.h"

/* host without its port ("name:8080" -> "name", "[::1]:80" -> "[::1]") into out; -1 when it
 * does not fit or is empty */
static int host_name(char *out, size_t cap, const char *host) {
  size_t n = strlen(host);
  if (host[0] == '[') {
    const char *close = strchr(host, ']');
    n = close ? (size_t)(close - host) + 1 : n;
  } else {
    const char *colon = strchr(host, ':');
    n = colon ? (size_t)(colon - host) : n;
  }
  if (n == 0 || n >= cap) {
    return -1;
  }
  memcpy(out, host, n);
  out[n] = '\0';
  if (n > 1 && out[n - 1] == '.') { /* "localhost." is localhost */
    out[n - 1] = '\0';
  }
  return 0;
}

/* a dotted IPv4 address: four decimal numbers 0..255 */
static int is_ipv4(const char *s) {
  int parts = 0;
  while (*s) {
    int v = 0, digits = 0;
    while (isdigit((unsigned char)*s) && digits < 4) {
      v = 10 * v + (*s++ - '0');
      digits++;
    }
    if (digits == 0 || digits > 3 || v > 255) {
      return 0;
    }
    parts++;
    if (*s == '.' && parts < 4) {
      s++;
    } else if (*s) {
      return 0;
    }
  }
  return parts == 4;
}

int view__host_allowed(const hil_view_options *o, const char *host) {
  char name[HIL_VIEW_ADDRESS_MAX + 8];
  if (!host || host_name(name, sizeof name, host) != 0) {
    return 0;
  }
  if (strcasecmp(name, "localhost") == 0 || strcasecmp(name, o->address) == 0) {
    return 1;
  }
  /* bound to every interface: any address of this machine (an address is never rebound) */
  if (strcmp(o->address, "0.0.0.0") == 0 && is_ipv4(name)) {
    return 1;
  }
  for (int i = 0; i < o->nhosts; i++) {
    if (strcasecmp(name, o->hosts[i]) == 0) {
      return 1;
    }
  }
  return 0;
}

int view__origin_allowed(const char *origin, const char *host) {
  if (!origin) {
    return 1; /* a program (Node.js, Python, Foxglove's desktop app): no page to trust */
  }
  static const char *const trusted[] = {"https://app.foxglove.dev", "https://studio.foxglove.dev",
                                        "file://"};
  for (size_t i = 0; i < sizeof trusted / sizeof trusted[0]; i++) {
    if (strcmp(origin, trusted[i]) == 0) {
      return 1;
    }
  }
  /* our own page: http:// and exactly the Host it asked (a prefix would let
     http://127.0.0.1:80801 or http://127.0.0.1:8080.evil.example through) */
  static const char scheme[] = "http://";
  return host && strncmp(origin, scheme, sizeof scheme - 1) == 0 &&
         strcmp(origin + sizeof scheme - 1, host) == 0;
}

int hil_view_add_host(hil_view_options *o, const char *name, char *err, size_t err_sz) {
  const size_t n = strlen(name);
  if (n == 0 || n >= sizeof o->hosts[0]) {
    snprintf(err, err_sz, "--view-host: expected a host name of 1 to %zu characters (got \"%s\")",
             sizeof o->hosts[0] - 1, name);
    return HIL_EINVAL;
  }
  for (size_t i = 0; i < n; i++) {
    const unsigned char c = (unsigned char)name[i];
    if (!isalnum(c) && c != '-' && c != '.' && c != '_') {
      snprintf(err, err_sz,
               "--view-host: \"%s\" is not a host name (letters, digits, '-', '.', '_'; no port)",
               name);
      return HIL_EINVAL;
    }
  }
  if (o->nhosts >= HIL_VIEW_HOSTS_MAX) {
    snprintf(err, err_sz, "--view-host: at most %d names", HIL_VIEW_HOSTS_MAX);
    return HIL_EINVAL;
  }
  snprintf(o->hosts[o->nhosts++], sizeof o->hosts[0], "%s", name);
  return HIL_OK;
}
