/* tools/bench_messages_copy.c: hil/zmq/json_messages.c compiled again for bench_messages, its number
 * formatter routed through bench_num_format (tools/bench_messages.c), so that the publishing
 * encoders can be timed with the library and with the Grisu2 it replaced, in one process. This
 * copy stands in for the library's json_messages.o in bench_messages only. */
#define hil_num_format bench_num_format
#include "hil/zmq/json_messages.c"
