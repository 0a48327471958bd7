/* pthread_setname_np is a GNU extension: <pthread.h> declares it only with _GNU_SOURCE. */
#define _GNU_SOURCE
#include <pthread.h>
#include "csystem.h"

int signet_name_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }
