#ifndef SIGNET_CQRENCODE_SHIM_H
#define SIGNET_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
