"""A stand-in for freshd_results.study.Runner that answers from a function
of the arguments, for tests of the sections."""

import concurrent.futures


class FakeRunner:
    def __init__(self, result_of_args):
        self.result_of_args = result_of_args
        self.args = []

    def submit(self, args):
        self.args.append(list(args))
        f = concurrent.futures.Future()
        f.set_result(self.result_of_args(args))
        return f
