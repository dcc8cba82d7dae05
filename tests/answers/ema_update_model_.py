"""Answers to `ema_update_model_(teacher, student, decay)`: EMA of parameters, copied buffers.

These call a right ema_update_, so that only the model-level logic is on trial.
"""

import copy

import torch

from tests.answers.ema_update_ import right_lerp as ema_update_


def right_zip(teacher, student, decay=0.99):
    """Parameters and buffers in matching order (the same architecture lists them alike)."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
    return teacher


@torch.no_grad()
def right_foreach_by_name(teacher, student, decay=0.99):
    """Matched by name, one _foreach_ kernel for all parameters, each student tensor converted
    to its teacher's dtype (a no-op when they match)."""
    student_parameters = dict(student.named_parameters())
    pairs = [(p, student_parameters[name]) for name, p in teacher.named_parameters()]
    torch._foreach_lerp_([t for t, _ in pairs], [s.to(t.dtype) for t, s in pairs], 1 - decay)
    student_buffers = dict(student.named_buffers())
    for name, buffer in teacher.named_buffers():
        buffer.copy_(student_buffers[name])
    return teacher


def right_named_modules(teacher, student, decay=0.99):
    """Module by module, each one's own tensors only (recurse=False), so that a tensor is
    met once; a parameter shared by two modules is remembered and done once."""
    done = set()
    student_modules = dict(student.named_modules())
    with torch.no_grad():
        for name, module in teacher.named_modules():
            twin = student_modules[name]
            twin_parameters = dict(twin.named_parameters(recurse=False))
            for key, parameter in module.named_parameters(recurse=False):
                if id(parameter) not in done:
                    done.add(id(parameter))
                    ema_update_(parameter, twin_parameters[key], decay)
            twin_buffers = dict(twin.named_buffers(recurse=False))
            for key, buffer in module.named_buffers(recurse=False):
                buffer.copy_(twin_buffers[key])
    return teacher


def wrong_foreach_mixed_dtypes(teacher, student, decay=0.99):
    """Was `right_foreach_by_name`: _foreach_lerp_ refuses a bfloat16 student for a float32
    teacher ("expected dtype float for `end`"); the spec says convert each student tensor."""
    with torch.no_grad():
        student_parameters = dict(student.named_parameters())
        names = [name for name, _ in teacher.named_parameters()]
        torch._foreach_lerp_(
            [p for _, p in teacher.named_parameters()], [student_parameters[n] for n in names], 1 - decay
        )
        student_buffers = dict(student.named_buffers())
        for name, buffer in teacher.named_buffers():
            buffer.copy_(student_buffers[name])
    return teacher


def wrong_load_state_dict(teacher, student, decay=0.99):
    """Was `right_load_state_dict`. A tied weight stays one tensor (load_state_dict copy_s into the
    existing tensors), but its values come out wrong: state_dict() lists it under both names and
    named_parameters() under the first only, so the second name is taken for a buffer and the
    student's value, loaded last, overwrites the average. state_dict() also leaves out
    non-persistent buffers, which are then never copied, and the averaged state dict it builds is
    a second copy of the whole model."""
    parameter_names = {name for name, _ in teacher.named_parameters()}
    with torch.no_grad():
        state = {
            name: decay * t + (1 - decay) * student.state_dict()[name] if name in parameter_names
            else student.state_dict()[name]
            for name, t in teacher.state_dict().items()
        }
    teacher.load_state_dict(state)
    return teacher


def wrong_allocates_per_parameter(teacher, student, decay=0.99):
    """Right values, in place, but each parameter's update is computed out of place and
    copied: a temporary the size of every parameter (three, at the peak)."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.copy_(decay * t + (1 - decay) * s)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
    return teacher


def wrong_converts_student(teacher, student, decay=0.99):
    """Makes lerp_ accept the dtypes: when the student's dtype is not the teacher's, converts
    the student with `student.to(...)`, which changes the caller's model (a bfloat16 student
    becomes float32 and trains on in float32)."""
    with torch.no_grad():
        teacher_dtype = next(teacher.parameters()).dtype
        if next(student.parameters()).dtype != teacher_dtype:
            student.to(teacher_dtype)
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.lerp_(s, 1 - decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
    return teacher


def wrong_pairs_trainable_student(teacher, student, decay=0.99):
    """Takes the student's parameters that an optimizer updates (requires_grad) and zips them
    with all of the teacher's: one frozen student layer shifts every pair after it."""
    with torch.no_grad():
        trainable = [s for s in student.parameters() if s.requires_grad]
        for t, s in zip(teacher.parameters(), trainable):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
    return teacher


def wrong_skips_frozen_parameters(teacher, student, decay=0.99):
    """Matched by name, but skips the parameters the student does not train, thinking they
    never change: the spec averages frozen parameters too."""
    with torch.no_grad():
        student_parameters = dict(student.named_parameters())
        for name, t in teacher.named_parameters():
            if student_parameters[name].requires_grad:
                ema_update_(t, student_parameters[name], decay)
        student_buffers = dict(student.named_buffers())
        for name, t in teacher.named_buffers():
            t.copy_(student_buffers[name])
    return teacher


def wrong_walks_layers_by_class_name(teacher, student, decay=0.99):
    """Walks the modules and averages the parameters of those whose class name says they are
    a layer (Linear, Conv, Norm, Embedding) with a recursive parameters(): a container named
    like a layer (a `ConvBlock`) averages its children's parameters, and they do it again."""
    layer_words = ("Linear", "Conv", "Norm", "Embedding")
    with torch.no_grad():
        for t_module, s_module in zip(teacher.modules(), student.modules()):
            if any(word in type(t_module).__name__ for word in layer_words):
                for t, s in zip(t_module.parameters(), s_module.parameters()):
                    ema_update_(t, s, decay)
            for t, s in zip(t_module.buffers(recurse=False), s_module.buffers(recurse=False)):
                t.copy_(s)
    return teacher


def wrong_buffers_from_state_dict(teacher, student, decay=0.99):
    """Parameters by name; buffers taken as the state_dict entries that are not parameters.
    state_dict() leaves non-persistent buffers out (they are never copied) and lists a tied
    weight under its second name too (which is then copied from the student)."""
    with torch.no_grad():
        teacher_parameters = dict(teacher.named_parameters())
        student_parameters = dict(student.named_parameters())
        for name, t in teacher_parameters.items():
            ema_update_(t, student_parameters[name], decay)
        student_state = student.state_dict()
        for name, t in teacher.state_dict().items():
            if name not in teacher_parameters:
                t.copy_(student_state[name])
    return teacher


def wrong_every_name_of_a_tied_weight(teacher, student, decay=0.99):
    """Lists parameters with remove_duplicate=False, so that no name is missed: a weight tied
    between the embedding and the output layer is averaged twice per call."""
    with torch.no_grad():
        student_parameters = dict(student.named_parameters(remove_duplicate=False))
        for name, t in teacher.named_parameters(remove_duplicate=False):
            ema_update_(t, student_parameters[name], decay)
        student_buffers = dict(student.named_buffers())
        for name, t in teacher.named_buffers():
            t.copy_(student_buffers[name])
    return teacher


def wrong_averages_float_buffers(teacher, student, decay=0.99):
    """Averages floating-point buffers and copies integer ones (a rule some libraries use);
    the spec says running statistics are copied, not averaged."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            if t.is_floating_point():
                ema_update_(t, s, decay)
            else:
                t.copy_(s)
    return teacher


def wrong_skips_integer_buffers(teacher, student, decay=0.99):
    """Copies only floating-point buffers, thinking integer ones are bookkeeping: BatchNorm's
    num_batches_tracked (and any step counter) stays behind the student's."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            if t.is_floating_point():
                t.copy_(s)
    return teacher


def wrong_copies_buffers_by_arithmetic(teacher, student, decay=0.99):
    """One rule for everything: a float buffer is "copied" as an EMA with decay 0,
    lerp_(s, 1). That equals a copy only for finite values: a running maximum that starts at
    -inf becomes nan (inf times 0)."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s, decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            if t.is_floating_point():
                ema_update_(t, s, 0.0)
            else:
                t.copy_(s)
    return teacher


def wrong_turns_grad_back_on(teacher, student, decay=0.99):
    """Switches grad mode off for the loop and back on at the end, instead of using
    `with torch.no_grad():`: a caller inside torch.no_grad() finds it switched on."""
    torch.set_grad_enabled(False)
    for t, s in zip(teacher.parameters(), student.parameters()):
        ema_update_(t, s, decay)
    for t, s in zip(teacher.buffers(), student.buffers()):
        t.copy_(s)
    torch.set_grad_enabled(True)
    return teacher


def wrong_detaches_student(teacher, student, decay=0.99):
    """Detaches the student's parameters in place "so that nothing is recorded": detach_()
    switches off their requires_grad, and the student stops training."""
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            ema_update_(t, s.detach_(), decay)
        for t, s in zip(teacher.buffers(), student.buffers()):
            t.copy_(s)
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


# The check that must catch each wrong answer: the start of the message its hidden test fails
# with (tests/test_answers.py holds every wrong answer to it, so no edit of a test moves it silently).
CAUGHT_BY = {
    "wrong_allocates_per_parameter": "`ema_update_model_` needed 6.3 MB of new memory at its peak; an update in",
    "wrong_assigns_data": "`ema_update_model_` gave `teacher.step` new memory: `teacher.step` must be",
    "wrong_averages_buffers": "NotImplementedError: \"lerp_kernel_scalar\" not implemented for 'Long'",
    "wrong_averages_float_buffers": "`ema_update_model_`: the teacher's buffer `stem.1.running_mean` (buffers",
    "wrong_buffers_from_state_dict": "`ema_update_model_`: the teacher's buffer `0.scale` (registered with",
    "wrong_converts_student": "`ema_update_model_` changed the student's `0.weight` from torch.bfloat16",
    "wrong_copies_buffers_by_arithmetic": "`ema_update_model_`: the teacher's buffer `2.running_max` (buffers are",
    "wrong_copies_student": "`ema_update_model_`: the teacher's parameter `stem.0.weight` has wrong",
    "wrong_deepcopy": "`ema_update_model_` returned a Encoder, not the model it was given; it",
    "wrong_detaches_student": "`ema_update_model_` changed `student.stem.0.weight.requires_grad` from",
    "wrong_every_name_of_a_tied_weight": "`ema_update_model_`: the teacher's parameter `embed.weight` (tied: one",
    "wrong_foreach_mixed_dtypes": "`ema_update_model_` of a float32 teacher from a bfloat16 student raised",
    "wrong_load_state_dict": "`ema_update_model_`: the teacher's buffer `0.scale` (registered with",
    "wrong_pairs_trainable_student": "`ema_update_model_`: the teacher's parameter `0.weight` (frozen in the",
    "wrong_parameters_only": "`ema_update_model_`: the teacher's buffer `step` (buffers are copied from",
    "wrong_skips_frozen_parameters": "`ema_update_model_`: the teacher's parameter `0.weight` (frozen in the",
    "wrong_skips_integer_buffers": "`ema_update_model_`: the teacher's buffer `step` (buffers are copied from",
    "wrong_turns_grad_back_on": "`ema_update_model_` changed grad mode (torch.is_grad_enabled()) from False",
    "wrong_walks_layers_by_class_name": "`ema_update_model_`: the teacher's parameter `0.conv.weight` has wrong",
}
