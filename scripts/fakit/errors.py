"""Exceptions shared by every layer of the harness."""


class AclnnError(RuntimeError):
    """aclnn<Op>GetWorkspaceSize (or the run stage) returned a non-zero status.

    `status` is the aclnn status code (161001 null pointer, 161002 invalid parameter, ...);
    the message is the log line the operator printed, naming the parameter and the rule.
    """

    def __init__(self, status: int, message: str):
        super().__init__(f"aclnn status {status}: {message}")
        self.status = int(status)
        self.log = message


class EmulatorError(RuntimeError):
    """The emulated kernel faulted on the cpu backend: a misuse of the Ascend C API (a WaitFlag
    nothing sets, a GM access past a buffer, a local buffer overflow, ...) or a deadlock. The
    message is the emulator's ("[ascendc-emu] <api> on <core> of kernel <k>: ..."). Every thread
    of the launch has stopped and its memory is freed: the process and the next launch are fine.
    A RuntimeError, so that framework adapters pass it on as one."""


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no CANN toolkit, no device, ...).

    The CLI maps this to exit code 2 with the message, which says what to install.
    """
