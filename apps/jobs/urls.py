from django.urls import path

from apps.jobs import views

app_name = "jobs"
urlpatterns = [
    path("endpoints/", views.endpoint_list, name="endpoint-list"),
    path("endpoints/<int:endpoint_id>/run/", views.endpoint_run, name="endpoint-run"),
    path("jobs/<int:job_id>/", views.job_detail, name="job-detail"),
    path("jobs/<int:job_id>/cancel/", views.job_cancel, name="job-cancel"),
    path("jobs/<int:job_id>/retry/", views.job_retry, name="job-retry"),
]
