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


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run here (no CANN toolkit, no device, ...).

    The CLI maps this to exit code 2 with the message, which says what to install.
    """
