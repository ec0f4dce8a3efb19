/* tools/campaign/progress.c: how far a campaign is — on a terminal a bar redrawn in place with
 * the rate and the time left, elsewhere (a CI log, a file) one line every tenth of the runs. */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "campaign.h"

static void format_time(char *out, size_t out_sz, double s) {
  if (!isfinite(s) || s < 0) {
    snprintf(out, out_sz, "--:--");
  } else if (s < 3600) {
    snprintf(out, out_sz, "%d:%02d", (int)s / 60, (int)s % 60);
  } else {
    snprintf(out, out_sz, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
  }
}

static void print(campaign_progress *p, int newline) {
  const double elapsed = campaign_now() - p->start;
  const int here = p->done - p->start_done; /* runs of this session: the rate */
  const double rate = elapsed > 0 ? here / elapsed : 0;
  char left[32], spent[32];
  format_time(left, sizeof left, rate > 0 ? (p->total - p->done) / rate : NAN);
  format_time(spent, sizeof spent, elapsed);
  const int width = 30, fill = p->total > 0 ? width * p->done / p->total : width;
  char bar[64];
  for (int i = 0; i < width; i++) {
    bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
  }
  bar[width] = '\0';
  fprintf(stderr, "%s[%s] %d/%d runs, %d failed, %.1f runs/min, %s elapsed, ETA %s%s",
          p->tty ? "\r" : "", bar, p->done, p->total, p->failed, 60 * rate, spent, left,
          newline || !p->tty ? "\n" : "  ");
  fflush(stderr);
}

void campaign_progress_begin(campaign_progress *p, int total, int done) {
  p->total = total;
  p->done = p->start_done = done;
  p->failed = 0;
  p->start = p->last_print = campaign_now();
  p->tty = isatty(2);
  print(p, 0);
}

void campaign_progress_step(campaign_progress *p, int done, int force) {
  const int before = p->done;
  p->done = done;
  const double now = campaign_now();
  const int tenth = p->total >= 10 ? p->total / 10 : 1;
  if (p->tty ? (force || now - p->last_print > 0.25)
             : (done / tenth != before / tenth || done == p->total)) {
    p->last_print = now;
    print(p, 0);
  }
}

void campaign_progress_end(campaign_progress *p) {
  if (p->tty) {
    print(p, 1);
  }
}
