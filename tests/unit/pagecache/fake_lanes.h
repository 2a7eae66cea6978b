/* fake_lanes.h: what fake_device.c hands to the lanes of fake_lanes.c (not for tests). */
#ifndef VAST_TEST_FAKE_LANES_H
#define VAST_TEST_FAKE_LANES_H

#include "fake_device.h"

enum fake_op_kind { FAKE_OP_H2D, FAKE_OP_D2H, FAKE_OP_COPY };

/* Queues one operation on the ordered lane (unordered: the other one). ticket != NULL: the
 * caller waits for it through fake_lanes_wait_ticket; slot: a staging slot transfer
 * (fail_ticket_after applies when it runs, tickets_out counts it). For FAKE_OP_COPY, host is
 * the source chunk's memory + src offset. */
int fake_lanes_submit(struct fake_device *d, int unordered, enum fake_op_kind kind,
                      struct fake_chunk *chunk, size_t off, void *host, size_t n, int slot,
                      void **ticket);
int fake_lanes_wait(struct fake_device *d);
int fake_lanes_wait_ticket(struct fake_device *d, void *ticket);
/* Runs and frees whatever is left, frees the lanes. */
void fake_lanes_fini(struct fake_device *d);

#endif
