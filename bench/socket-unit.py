#!/usr/bin/python3
# Runs a command as systemd runs ifmeterd under ifmeterd.socket: the link
# event socket opened by a privileged parent (ListenNetlink=route 1, its
# ReceiveBuffer= forced past net.core.rmem_max) and passed as fd 3 with
# LISTEN_FDS=1, LISTEN_FDNAMES=link-events and LISTEN_PID the command's own
# (exec keeps the pid). Root, in the namespace whose links are to be read.
#   bench/socket-unit.py RECEIVE_BUFFER_BYTES COMMAND...
import os
import socket
import sys

SO_RCVBUFFORCE = 33
RTMGRP_LINK = 1

receive_buffer = int(sys.argv[1])
command = sys.argv[2:]
events = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
events.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, receive_buffer)
events.bind((0, RTMGRP_LINK))
os.dup2(events.fileno(), 3)
os.set_inheritable(3, True)
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="link-events")
os.execvp(command[0], command)
