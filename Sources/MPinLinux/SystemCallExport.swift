// retryingOnInterrupt and SystemCallError live in MPinPOSIX, below MPinLogin and MPinServer,
// which need them too but do not depend on MPinLinux. Re-exported, so that what imports
// MPinLinux (mpin-fork-check, the tests) still finds them here.
@_exported import MPinPOSIX
