"""What the batch's ``forkserver`` imports before it forks workers (:func:`planner.validate.batch._context`): the
validator, and the template state every validation uses, built once here (:func:`planner.validate.fastpath.warm`)
so that each worker inherits it instead of building it under its memory cap. Imported for that side effect only."""

from planner.validate import checks  # noqa: F401  (the validator, imported once in the server)
from planner.validate.fastpath import warm

warm()
