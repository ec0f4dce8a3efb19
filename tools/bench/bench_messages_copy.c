/* tools/bench/bench_messages_copy.c: hil/json_writer.c and hil/zmq/json_messages.c compiled
 * again for bench_messages, their number formatter routed through bench_num_format
 * (tools/bench/bench_messages.c), so that the publishing encoders can be timed with the library
 * and with the Grisu2 it replaced, in one process. This copy stands in for the library's
 * json_writer.o and json_messages.o in bench_messages only. */
#define hil_num_format bench_num_format
#include "hil/json_writer.c"
#include "hil/zmq/json_messages.c"
