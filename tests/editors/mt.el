;;; mt.el --- helpers of the batch-Emacs test drivers (mercury_test.el, mercury_readme_test.el)  -*- lexical-binding: t; -*-

(defun mt-wait (pred seconds)
  "Process server output until PRED holds or SECONDS pass."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun mt-messages ()
  (with-current-buffer "*Messages*" (buffer-string)))

(defun mt-check (name ok &optional detail)
  "Print PASS NAME, or FAIL NAME with DETAIL and *Messages*, then exit 1."
  (if ok (princ (format "PASS %s\n" name))
    (princ (format "FAIL %s %s\n--- *Messages*:\n%s\n" name (or detail "") (mt-messages)))
    (kill-emacs 1)))

(provide 'mt)
