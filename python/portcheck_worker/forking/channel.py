"""The fork server's channel to each zygote: a socketpair of SOCK_SEQPACKET, one JSON message per
packet, either way, with file descriptors attached where one is handed over.

Why a socket and not two pipes: a zygote that a base zygote forks (server/zygote.py) talks to the
server directly, and the only way for the server to give it a channel is to pass one end to the
base with SCM_RIGHTS. Packets keep message boundaries, so a descriptor always arrives with the
message that names it.

The functions bound here are taken when this module is imported, before any user code runs in
the process: a user's module that replaces `json.dumps` or `socket.socket.send` changes nothing
for the channel.
"""
import array
import json
import os
import socket

from ..base import channel_messages, protocol

_dumps = json.dumps
_loads = json.loads
_SCM_RIGHTS = socket.SCM_RIGHTS
_SOL_SOCKET = socket.SOL_SOCKET
_MSG_DONTWAIT = socket.MSG_DONTWAIT
# The largest message either side sends: commands name files, events carry a few numbers; a
# zygote's import request carries one kernel reference.
MAX_MESSAGE = 1 << 20
_MAX_FDS = 4


def pair():
    """(server's end, zygote's end), both blocking, not inherited across exec."""
    return socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)


def out_of_reach(sock):
    """The zygote's end moved above the descriptors a user's import touches (a telemetry library
    that writes to every socket it finds, code that dup2()s onto low numbers), as the cells' files
    are: the socket on the new descriptor; the old one is closed."""
    fd = protocol.high_fd(os.dup(sock.fileno()))
    moved = socket.socket(fileno=fd)
    sock.close()
    return moved


def send(sock, message, fds=()):
    """One message (and `fds`, duplicated into the receiver). Raises OSError when the other end is
    gone."""
    data = _dumps(message, default=str).encode()
    if fds:
        sock.sendmsg([data], [(_SOL_SOCKET, _SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendmsg([data])


def receive(sock, message_kind, breaches=None):
    """The messages waiting now, without blocking: a list of (message, fds), and whether the other
    end has closed. Descriptors arrive open; the caller owns them. Each message is read as a
    `message_kind` of protocol.schema.json (zygote_command, zygote_event): checked, and converted
    into its class (base/channel_messages.py). A message that breaks it raises ProtocolError, a
    bug of ours that ends the process that reads it, unless the caller
    passes a list `breaches`: the ProtocolError is added there, the message dropped (its
    descriptors closed) and the next read. The server passes one: a zygote's import ran user code
    beside its end (server/zygote_pool.py)."""
    messages, ended = [], False
    space = socket.CMSG_SPACE(_MAX_FDS * array.array("i").itemsize)
    read = channel_messages.READERS[message_kind]
    while True:
        try:
            data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, space, _MSG_DONTWAIT)
        except (BlockingIOError, InterruptedError):
            break
        except ConnectionResetError:
            ended = True
            break
        fds = []
        for level, kind, payload in ancillary:
            if level == _SOL_SOCKET and kind == _SCM_RIGHTS:
                received = array.array("i")
                received.frombytes(payload[:len(payload) - len(payload) % received.itemsize])
                fds.extend(received)
        if not data and not fds:
            ended = True
            break
        try:
            message = _loads(data)
        except ValueError:
            for fd in fds:  # not ours: nothing else writes here, but never die on it
                _close(fd)
            continue
        try:
            message = read(message)
        except protocol.ProtocolError as breach:
            if breaches is None:
                raise
            breaches.append(breach)
            for fd in fds:
                _close(fd)
            continue
        messages.append((message, fds))
    return messages, ended


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass
