/* host.c: port.h for a hosted build (the reference): stdio, exit, no clock. */
#include "port.h"

#include <stdio.h>
#include <stdlib.h>

void fw_puts(const char *s)
{
	fputs(s, stdout);
}

void fw_exit(int code)
{
	fflush(stdout);
	exit(code);
}

uint64_t fw_clock(void)
{
	return 0;
}

const uint32_t fw_clock_hz = 0;

long fw_stack_unused(void)
{
	return -1;
}
