/* libearly.so's interface (preload/tests/early.c), for preload/tests/safety.c. */
#ifndef CACHECOPY_PRELOAD_EARLY_H
#define CACHECOPY_PRELOAD_EARLY_H

/* errno as the constructor leaves it: main must find it unchanged. */
#define EARLY_ERRNO_AT_END 5353

struct early_report {
    /* The IFUNC resolver: it ran, environ was set then (the loader relocates before the C
     * library starts: 0), its copies were right, errno after them (set to 4711 before). */
    int resolver_ran, resolver_env, resolver_ok, resolver_errno;
    /* The constructor: it ran, its copies were right, errno after them (4242 before), the
     * standard error was closed around them. */
    int ctor_ran, ctor_ok, ctor_errno, ctor_stderr_closed;
};

/* The IFUNC (42). */
int early_call(void);
void early_get(struct early_report *r);
/* Entry i of the getenv log (names starting with CACHECOPY_): 1 and the name and phase (0
 * relocation, 1 the constructor, 2 later), or 0 past the end. */
int early_log(int i, const char **name, int *when);

#endif
