/* tests/hil/client/small_config.h: the smallest configuration the header allows, as a board
 * with little RAM would set it through -DACH_CONFIG_FILE. The suites run again with it. */
#define ACH_MAX_PAYLOAD 72
#define ACH_MAX_JOINTS 3
