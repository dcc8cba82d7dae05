"""Answers to `ema_update_model_(teacher, student, decay)`: EMA of parameters, copied buffers.

These call a right ema_update_, so that only the model-level logic is on trial.
"""

import copy

import torch

from answers.ema_update_ import right_lerp as ema_update_


def right_zip(teacher, student, decay=0.99):
    """Parameters and buffers in matching order."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
    return teacher


@torch.no_grad()
def right_foreach_by_name(teacher, student, decay=0.99):
    """Matched by name, one _foreach_ kernel for all parameters."""
    student_parameters = dict(student.named_parameters())
    names = [name for name, _ in teacher.named_parameters()]
    torch._foreach_lerp_(
        [p for _, p in teacher.named_parameters()], [student_parameters[n] for n in names], 1 - decay
    )
    student_buffers = dict(student.named_buffers())
    for name, buffer in teacher.named_buffers():
        buffer.copy_(student_buffers[name])
    return teacher


def right_load_state_dict(teacher, student, decay=0.99):
    """Build the averaged state dict; load_state_dict copies it into the existing tensors."""
    parameter_names = {name for name, _ in teacher.named_parameters()}
    with torch.no_grad():
        state = {
            name: decay * t + (1 - decay) * student.state_dict()[name] if name in parameter_names
            else student.state_dict()[name]
            for name, t in teacher.state_dict().items()
        }
    teacher.load_state_dict(state)
    return teacher


def wrong_parameters_only(teacher, student, decay=0.99):
    """Forgets the buffers: the teacher keeps stale BatchNorm statistics."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
    return teacher


def wrong_averages_buffers(teacher, student, decay=0.99):
    """Averages every tensor of the state dict, integer counters included."""
    with torch.no_grad():
        for t, s in zip(teacher.state_dict().values(), student.state_dict().values()):
            t.lerp_(s, 1 - decay)
    return teacher


def wrong_copies_student(teacher, student, decay=0.99):
    """Copies the student outright: no averaging at all."""
    teacher.load_state_dict(student.state_dict())
    return teacher


def wrong_deepcopy(teacher, student, decay=0.99):
    """Returns a new model; the caller's teacher is unchanged."""
    teacher = copy.deepcopy(student)
    return teacher


def wrong_assigns_data(teacher, student, decay=0.99):
    """Swaps new memory behind every parameter."""
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.data = decay * t.data + (1 - decay) * s.data
    for t, s in zip(teacher.buffers(), student.buffers()):
        t.data = s.data.clone()
    return teacher
